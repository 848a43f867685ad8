"""run.py over several libraries on one pool of workers, within a time budget (the lent machine's).

    python bench/truth/run_many.py OUTDIR SECONDS lib...            # breaks and recompiles
    python bench/truth/run_many.py OUTDIR SECONDS --lines lib...    # executed lines of the models that ran

Every model of every library, interleaved so that each library gets its share of the cores, one
process each (run.run_one, as run.py); `OUTDIR/<lib>.json` (`.lines.json.gz`) is rewritten after
every model, so a budget that runs out loses nothing that finished; no model starts later than
SECONDS after the first.
`--lines` runs the models whose status is ok in `OUTDIR/<lib>.json`. `J` (environment): workers
(default 16). The files are run.py's, to be committed as `<lib>-<ver>-torch<ver>[.lines].json[.gz]`.
"""
from __future__ import annotations

import json
import os
import sys
import threading
import time
import zlib
from concurrent.futures import ThreadPoolExecutor

import run


def main(argv):
    out, budget, *rest = argv
    lines = "--lines" in rest
    libs = [a for a in rest if a != "--lines"]
    suffix = ".lines.json.gz" if lines else ".json"
    versions, results, tasks = {}, {}, []
    for lib in libs:
        versions[lib] = run._versions(lib)
        if lines:
            with open(os.path.join(out, f"{lib}.json"), encoding="utf-8") as f:
                names = [m["name"] for m in json.load(f)["models"] if m["status"] == "ok"]
        else:
            names = run._names(lib)
        results[lib] = {}
        tasks += [(lib, name) for name in names]
    tasks.sort(key=lambda t: (zlib.crc32(t[1].encode()) % 97, t))  # the libraries interleaved, reproducibly
    lock = threading.Lock()
    deadline = time.time() + float(budget)  # from when the models start (listing them imports every library)

    def one(task):
        lib, name = task
        if time.time() > deadline:
            return
        record = run.run_one(lib, name, 40 if lines else 60, lines)
        with lock:
            results[lib][run.key(record)] = record
            run._write(os.path.join(out, lib + suffix), lib, *versions[lib], results[lib])
            print(f"{lib} {name}: {record['status']}", flush=True)

    with ThreadPoolExecutor(int(os.environ.get("J", "16"))) as pool:
        list(pool.map(one, tasks))
    for lib in libs:
        ok = sum(r["status"] == "ok" for r in results[lib].values())
        listed = sum(1 for t in tasks if t[0] == lib)
        print(f"{lib}{suffix}: {ok} ok of {len(results[lib])} run, {listed} listed")


if __name__ == "__main__":
    main(sys.argv[1:])
