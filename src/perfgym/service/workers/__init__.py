"""The service's worker processes: the dispatcher that feeds them and what runs inside one."""
