"""Render a runner results.json as the table of docs/validation.md.

python test/gpu/report.py results.json > table.md
"""

import json
import sys


def main(path: str) -> None:
    with open(path) as f:
        data = json.load(f)
    rows = data["results"]
    passed = sum(r["passed"] for r in rows)
    print(
        f"Run of {data['date']} on {data['device']} (driver API {data['driver']}); "
        f"PTX assembled by {data['ptxas']}: **{passed} passed, {len(rows) - passed} failed**.\n"
    )
    print("| configuration | error | bound / detail | result | ptxas serialized |")
    print("|---|---|---|---|---|")
    for r in rows:
        error = f"{r['error']:.3g}" if isinstance(r["error"], float) else str(r["error"])
        print(
            f"| `{r['name']}` | {error} | {r['detail']} | "
            f"{'pass' if r['passed'] else 'FAIL'} | {'yes' if r['serialized'] else 'no'} |"
        )


if __name__ == "__main__":
    main(sys.argv[1])
