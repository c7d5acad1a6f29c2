"""The HTTP side of `perfgym serve`: app, routes, the persistent queue, intake and guards."""
