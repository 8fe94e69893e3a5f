"""How this machine's CPU speed drifts under sustained load, without
PostgreSQL: one busy loop per core for SECONDS (default 120), the loops'
work summed per 10 s.  Prints the sums, then the last 10 s over the first.
bench/run.sh runs it so that its report shows the machine's own drift
beside the soak's.  Usage: python3 bench/cpu_drift.py [seconds]"""
import multiprocessing
import os
import sys
import time

INTERVAL = 10


def spin(seconds, results):
    counts = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        interval_end = time.monotonic() + INTERVAL
        count = 0
        while time.monotonic() < interval_end:
            for _ in range(10000):
                pass
            count += 1
        counts.append(count)
    results.put(counts)


def main():
    seconds = int(sys.argv[1]) if len(sys.argv) > 1 else 120
    results = multiprocessing.Queue()
    loops = [multiprocessing.Process(target=spin, args=(seconds, results))
             for _ in range(os.cpu_count())]
    for loop in loops:
        loop.start()
    per_loop = [results.get() for _ in loops]
    for loop in loops:
        loop.join()
    sums = [sum(counts) for counts in zip(*per_loop)]
    print(" ".join(str(s) for s in sums))
    print("%.2f" % (sums[-1] / sums[0]))


if __name__ == "__main__":
    main()
