"""The judge over HTTP (`perfgym serve`, its client and a service-backed sandbox) and on Ray.

Rooms: `server/` (the app and its queue), `workers/` (the judging processes), `client/`,
`ray_backend` (no HTTP); `backend` registers the 'service' and 'ray' judge backends
(`perfgym.judge.backend.get_backend` builds any). Nothing loads until it is asked for, so
`import perfgym.service.client` pays for the client alone.
"""
