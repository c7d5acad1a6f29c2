import re
import sys
from datetime import datetime


def main():
    requests = {}
    errors = {}
    slowest = {}
    for line in sys.stdin.read().splitlines():
        if not line.strip():
            continue
        match = re.match(r"(\S+) (\S+) (\S+) (\d+) (\d+)ms$", line)
        stamp = datetime.strptime(match.group(1), "%Y-%m-%dT%H:%M:%SZ")
        status = int(match.group(4))
        latency = int(match.group(5))
        hour = stamp.hour
        requests[hour] = requests.get(hour, 0) + 1
        errors[hour] = errors.get(hour, 0) + (1 if status >= 500 else 0)
        slowest[hour] = max(slowest.get(hour, 0), latency)
    for hour in sorted(requests):
        print(f"{hour:02d}", requests[hour], errors[hour], slowest[hour])


main()
