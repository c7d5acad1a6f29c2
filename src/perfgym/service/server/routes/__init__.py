"""The service's HTTP routes, one router per concern: judging, jobs, health, statistics."""
