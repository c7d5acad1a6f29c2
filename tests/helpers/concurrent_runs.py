"""`hold_and_look`: two Python programs in one sandbox at once, a holder and a looker started a
second later, for tests of what one run can see of another's."""

from __future__ import annotations

import threading
import time

from perfgym.sandbox import Limits, SandboxConfig, WarmSandbox


def hold_and_look(config: SandboxConfig, hold: str, hold_s: float, look: str,
                  look_s: float) -> tuple[str, str]:  # fmt: skip
    """(the holder's output, the looker's stdout): `hold` runs with HOLD_S=`hold_s` in its
    environment, `look` with LOOK_S=`look_s`, one second after the holder started."""
    sb = WarmSandbox(config)
    try:
        out: dict[str, str] = {}

        def run_holder() -> None:
            r = sb.run(["python3", "-c", hold], env={"HOLD_S": str(hold_s)},
                       limits=Limits(wall_s=30))  # fmt: skip
            out["hold"] = r.stdout_text + r.stderr_text

        t = threading.Thread(target=run_holder)
        t.start()
        time.sleep(1.0)  # the holder's start
        looked = sb.run(["python3", "-c", look], env={"LOOK_S": str(look_s)},
                        limits=Limits(wall_s=30))  # fmt: skip
        t.join()
        return out["hold"], looked.stdout_text.strip()
    finally:
        sb.close()
