"""Which measurement hit which graph-break id: compilelint/data/gb_measured.json, read by the
coverage table (`python -m compilelint.coverage`) for its "measured by" column.

    python bench/measure/collect.py /work/shared/truth/results-cpu-2.13.json /work/shared/truth/results-gpu-2.11.json

Sources: the `snippets_*.out` files of this folder (bench/measure/run.py, torch 2.13 CPU) and the truth
corpus probe results (truth/dynamo_probe.py; the JSON names its torch and device).
"""
import glob
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.dirname(os.path.dirname(HERE)), "compilelint", "data", "gb_measured.json")
HIT = re.compile(r"\b(GB\d{4})\b")


def main(truth_files):
    found = {}
    for path in sorted(glob.glob(os.path.join(HERE, "snippets_*.out"))):
        with open(path, encoding="utf-8") as f:
            header = f.readline()
            torch = re.search(r"torch (\S+?)[,+]", header).group(1)
            for line in f:
                if ":" in line and not line.startswith(" "):
                    name = line.split(":", 1)[0]
                    for gb in set(HIT.findall(line)):
                        found.setdefault(gb, set()).add(f"bench/measure/{os.path.basename(path)[:-4]}.py::{name} ({torch} cpu)")
    for path in truth_files:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        env = data["env"]
        where = f"{env['torch'].split('+')[0]} {env.get('device', 'cpu')}"
        for probe in data["summary"]:
            for gb in probe.get("gb_ids") or []:
                found.setdefault(gb, set()).add(f"truth probe {probe['name']} ({where})")
    with open(OUT, "w", encoding="utf-8") as f:
        json.dump({k: sorted(v) for k, v in sorted(found.items())}, f, indent=0, sort_keys=True)
        f.write("\n")
    print(f"wrote {OUT}: {len(found)} ids")


if __name__ == "__main__":
    main(sys.argv[1:])
