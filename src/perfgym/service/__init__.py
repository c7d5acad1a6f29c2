"""The judge over HTTP (`perfgym serve`, its client and a service-backed sandbox) and on Ray."""

from perfgym.service.backend import BACKENDS, JudgeBackend, make_backend, open_judge

__all__ = ["BACKENDS", "JudgeBackend", "make_backend", "open_judge"]
