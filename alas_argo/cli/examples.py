"""Examples for every command's ``--help``, in one place so that they read as a set and a test can hold them.

Keys are command paths as typed after ``alas`` (``"bench repair"``; ``""`` is ``alas`` itself). Each example
is a complete command line that works on a fresh checkout, optionally followed by ``#`` and what it shows.
:class:`~alas_argo.cli.app.Commands` appends them to the command's help as an ``examples:`` section.
"""

from __future__ import annotations

__all__ = ["EXAMPLES", "epilog"]

EXAMPLES: dict[str, tuple[str, ...]] = {
    "": ("alas run ta01 --disrupt breakdown          # plan, break a machine, repair",
         "alas instance list --suite alas45",
         "alas COMMAND --help                        # every command has examples"),
    "instance": ("alas instance list --suite ta", "alas instance show ft06 --json"),
    "instance list": ("alas instance list", "alas instance list --suite alas45 --json"),
    "instance show": ("alas instance show ta01", "alas instance show my-shop.txt --json   # a Taillard, "
                      "OR-Library or JSON file"),
    "solve": ("alas solve ft06", "alas solve ta01 --time-limit 30 --out ta01.json",
              "alas solve la01 --method dispatch --rule spt --json"),
    "validate": ("alas validate --instance ft06 --schedule ft06.json",
                 "alas validate --instance ft06 --schedule r.json --disruption d.json --baseline ft06.json --json"),
    "disrupt": ("alas disrupt --instance ft06 --schedule ft06.json --kind breakdown --out d.json",
                "alas disrupt --instance ta01 --schedule ta01.json --kind shock --share 0.3 --seed 4 --out d.json"),
    "repair": ("alas repair --instance ft06 --schedule ft06.json --disruption d.json --out r.json",
               "alas repair --instance ta01 --schedule ta01.json --disruption d.json --method full --time-limit 10 "
               "--out r.json --json"),
    "gantt": ("alas gantt --instance ft06 --schedule ft06.json --out ft06.png",
              "alas gantt --instance ft06 --schedule r.json --before ft06.json --disruption d.json --out repair.html"),
    "ir": ("alas ir schema > workflow.schema.json",
           "alas ir export alas-plan > plan.json && alas ir validate plan.json"),
    "ir schema": ("alas ir schema > workflow.schema.json",),
    "ir validate": ("alas ir validate plan.json",
                    "alas ir validate my-workflow.yaml --require-output-contracts --json"),
    "ir export": ("alas ir export alas-plan > plan.json", "alas ir export alas-repair --format yaml --out repair.yaml"),
    "log": ("alas log ls", "alas log show RUN", "alas log verify RUN --store s3"),
    "log ls": ("alas log ls", "alas log ls --json", "alas log ls --root /data/alas-log"),
    "log show": ("alas log show RUN", "alas log show RUN --version 2 --json > v2.json"),
    "log diff": ("alas log diff RUN 1 2", "alas log diff RUN 1 3 --limit 50 --json"),
    "log verify": ("alas log verify RUN", "alas log verify RUN --store s3 --json"),
    "replay": ("alas replay RUN", "alas replay RUN --skip-repairs --json"),
    "engines": ("alas engines matrix", "alas engines lint workflows/argo/*.yaml workflows/asl/*.asl.json"),
    "engines matrix": ("alas engines matrix", "alas engines matrix --markdown > matrix.md"),
    "engines lint": ("alas engines lint workflows/argo/alas-plan.yaml",
                     "alas engines lint workflows/asl/*.asl.json"),
    "render": ("alas render", "alas render --check                # exit 1 when the goldens are stale",
               "alas render --out /tmp/rendered --no-chart --image registry.local/alas:dev"),
    "submit": ("alas submit alas-plan -p instance=ta01 --dry-run",
               "alas submit workflows/argo/alas-plan.yaml -p instance=ft06 --namespace argo",
               "alas submit alas-plan --dry-run --json"),
    "step": ("alas step blueprint --run-id demo --root /tmp/alas --outputs /tmp/out   # as an Argo pod runs it",),
    "controller": ("ALAS_CONTROLLER__TOKEN=s3cret-token alas controller --port 8080",
                   "alas controller --no-auth --root /tmp/alas --port 0      # local tests only"),
    "smoke": ("alas smoke                                 # the store only: plan, commit, verify",
              "ALAS_CONTROLLER__TOKEN=s3cret-token alas smoke --controller http://127.0.0.1:8080 --json"),
    "operator": ("alas operator --namespace alas --once", "alas operator --namespace alas --metrics-port 9464"),
    "metrics": ("alas metrics serve --port 9464",),
    "metrics serve": ("alas metrics serve", "alas metrics serve --host 0.0.0.0 --port 9464"),
    "llm": ("OPENAI_BASE_URL=http://127.0.0.1:8000/v1 alas llm ping",),
    "llm ping": ("alas llm ping --llm-base-url http://127.0.0.1:8000/v1",
                 "OPENAI_API_KEY=... alas llm ping --llm-base-url https://api.openai.com/v1 --json"),
    "bench": ("alas bench static --suite smoke --time-limit 5", "alas bench repair --suite ft06,la01 --seeds 2"),
    "bench static": ("alas bench static --suite smoke --time-limit 5",
                     "alas bench static --suite alas45 --time-limit 60 --workers 2 --out bench/results/static"),
    "bench report": ("alas bench report fanout-1 --store s3",
                     "alas bench report fanout-1 --store s3 --out bench/results/fanout-1 --json"),
    "bench repair": ("alas bench repair --suite ft06,la01 --seeds 2 --time-limit 5",
                     "alas bench repair --suite alas45 --seeds 3 --methods lcrp,full --lcrp-effort 1,4",
                     "alas bench repair --from-csv bench/results/repair/repair.csv --out /tmp/report"),
    "bench validator": ("alas bench validator", "alas bench validator --instance ta01 --repeat 20 --json"),
    "bench runtime": ("alas bench runtime", "alas bench runtime --nodes 200 --repeats 1 --json"),
    "bench log": ("alas bench log --root /tmp/alas-bench", "alas bench log --store s3 --appends 100 --json"),
    "bench open": ("alas bench open --root /tmp/alas-bench", "alas bench open --events 10,100 --json"),
    "bench llm": ("alas bench llm --llm-base-url http://127.0.0.1:8000/v1 --suite ft06",
                  "alas bench llm --planner simulated --suite abz7 --seeds 3 --disruptions breakdown,shock"),
    "bench ablation": ("alas bench ablation --suite smoke --trials 5",
                       "alas bench ablation --suite ft06 --variants full,no_repair --faults 2 --json"),
}


def epilog(path: str) -> str | None:
    """The ``examples:`` section of command ``path`` (None when it has none)."""
    lines = EXAMPLES.get(path)
    if not lines:
        return None
    return "examples:\n" + "\n".join(f"  {line}" for line in lines)
