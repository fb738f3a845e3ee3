"""``python -m server.solver stats``: JSON lines, resume, the summary and its intervals."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from server.rules import WON, new_game
from server.solver.cli import main, read_jsonl, render_table, summary, wilson


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_wilson_interval() -> None:
    # Reference values (Wilson 1927; e.g. statsmodels proportion_confint(method="wilson")).
    low, high = wilson(5, 10)
    assert low == pytest.approx(0.2366, abs=1e-4) and high == pytest.approx(0.7634, abs=1e-4)
    low, high = wilson(0, 10)
    assert low == 0.0 and high == pytest.approx(0.2775, abs=1e-4)
    low, high = wilson(10, 10)
    assert low == pytest.approx(0.7225, abs=1e-4) and high == pytest.approx(1.0)
    assert wilson(0, 0) == (0.0, 1.0)
    low, high = wilson(839, 1000)
    assert low == pytest.approx(0.8149, abs=1e-4) and high == pytest.approx(0.8605, abs=1e-4)


def test_stats_writes_json_lines_and_resumes(tmp_path: Path, capsys) -> None:
    path = tmp_path / "balcony.jsonl"
    args = ["stats", "balcony", "--budget", "5", "--nodes", "3000", "--jsonl", str(path)]
    assert main([*args, "--deals", "3", "--prefix", "t"]) == 0
    first = lines(path)
    assert [r["seed"] for r in first] == ["t1", "t2", "t3"]
    for record in first:
        assert record["game"] == "balcony"
        assert record["verdict"] in ("won", "lost", "unknown")
        assert record["seconds"] >= 0 and 0 < record["nodes"] <= 3000
        assert isinstance(record["best_score"], int)
        if record["verdict"] == "won":
            game = new_game("balcony", record["seed"])
            for move in record["moves"]:
                game.play(move)
            assert game.status == WON
        else:
            assert "moves" not in record
    assert any(r["verdict"] == "won" for r in first)
    out = capsys.readouterr()
    assert "[3/3] t3" in out.err
    # Resume: the three seeds done are skipped, two more are solved and appended.
    assert main([*args, "--deals", "5", "--prefix", "t"]) == 0
    second = lines(path)
    assert second[:3] == first
    assert [r["seed"] for r in second[3:]] == ["t4", "t5"]
    out = capsys.readouterr()
    assert "3 already in" in out.err and "2 to solve" in out.err
    won = sum(r["verdict"] == "won" for r in second)
    assert out.out.splitlines()[2].split()[1] == str(won)


def test_a_line_cut_short_is_dropped_and_solved_again(tmp_path: Path) -> None:
    path = tmp_path / "g.jsonl"
    assert (
        main(
            [
                "stats",
                "gloucestershire",
                "--deals",
                "2",
                "--budget",
                "5",
                "--prefix",
                "t",
                "--jsonl",
                str(path),
            ]
        )
        == 0
    )
    text = path.read_text()
    path.write_text(text + text.splitlines()[0][:25])  # a crash in mid-write
    assert len(read_jsonl(str(path))) == 2
    assert path.read_text() == text
    assert (
        main(
            [
                "stats",
                "gloucestershire",
                "--deals",
                "3",
                "--budget",
                "5",
                "--prefix",
                "t",
                "--jsonl",
                str(path),
            ]
        )
        == 0
    )
    assert [r["seed"] for r in lines(path)] == ["t1", "t2", "t3"]


def test_summary_counts_and_intervals() -> None:
    records = [{"verdict": v, "seconds": 1.0} for v in ["won"] * 5 + ["lost"] * 3 + ["unknown"] * 2]
    text = summary(records).splitlines()
    assert text[1].split()[:3] == ["won", "5", "50.0"]
    assert "[23.7 %, 76.3 %]" in text[1]
    assert text[2].split()[:3] == ["lost", "3", "30.0"]
    assert text[3].split()[:3] == ["unknown", "2", "20.0"]


def test_the_module_runs_with_jobs(tmp_path: Path) -> None:
    """The entry point as documented, with two worker processes."""
    path = tmp_path / "c.jsonl"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "server.solver",
            "stats",
            "colorado",
            "--deals",
            "2",
            "--budget",
            "1",
            "--nodes",
            "500",
            "--jobs",
            "2",
            "--prefix",
            "t",
            "--jsonl",
            str(path),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert sorted(r["seed"] for r in lines(path)) == ["t1", "t2"]
    assert "colorado: 2 deals t1..t2" in done.stdout
    assert "[2/2]" in done.stderr


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(SystemExit):
        main(["stats", "balcony", "--deals", "3", "--budget", "0"])
    with pytest.raises(SystemExit):
        main(["stats", "chess", "--deals", "3", "--budget", "1"])
    with pytest.raises(SystemExit):
        main(["table", "--deals", "3", "--deals-of", "chess=3", "--budget", "1", "--results", "x"])


def test_table_writes_the_win_rate_table_and_its_command(tmp_path: Path) -> None:
    """``table`` solves the deals missing from its results folder, then writes one row
    per game (counts, the win rate's interval, medians, the seed's claim), the notes,
    and the command that regenerates it; a second run solves nothing new."""
    out, results = tmp_path / "WINRATES.md", tmp_path / "results"
    args = ["table", "--deals", "3", "--deals-of", "balcony=2", "--budget", "2"]
    args += ["--results", str(results)]
    assert main([*args, "--out", str(out), "--games", "gloucestershire", "balcony"]) == 0
    text = out.read_text()
    records = lines(results / "gloucestershire.jsonl") + lines(results / "balcony.jsonl")
    assert len(records) == 5
    assert "--deals 3 --deals-of balcony=2 --budget 2 --results" in text
    assert "--games gloucestershire balcony" in text
    rows = {line.split("|")[1].strip(): line for line in text.splitlines() if "| gl" in line}
    rows["balcony"] = next(line for line in text.splitlines() if "| balcony | 2 |" in line)
    glou = [c.strip() for c in rows["gloucestershire"].split("|")]
    lost = sum(r["verdict"] == "lost" for r in records if r["game"] == "gloucestershire")
    assert glou[4] == f"{lost} ({100 * lost / 3:.1f} %)" and lost >= 2
    assert glou[6].startswith("0.0 % [0.0 %,") and glou[7] == "–"  # no won deal
    assert "90 %" in rows["balcony"] and "almost never winnable" in text
    assert "Balcony: the seed's 90 % lies inside the interval" in text  # 2 won of 2: [34 %, 100 %]
    best = max(r["best_score"] for r in records if r["game"] == "gloucestershire")
    assert f"the best line reaches {best} cards at most" in text
    before = (results / "balcony.jsonl").read_text()
    assert main([*args, "--out", str(out), "--games", "gloucestershire", "balcony"]) == 0
    assert (results / "balcony.jsonl").read_text() == before and out.read_text() == text


@pytest.mark.parametrize(
    ("won", "unknown", "note"),
    [
        (25, 25, "lies inside the interval but is not confirmed"),
        (36, 14, "lies below the interval: more deals are winnable than it says"),
        (10, 5, "lies above the interval: fewer deals are winnable than it says"),
    ],
)
def test_the_colorado_note_sets_the_seeds_claim_against_the_interval(
    won: int, unknown: int, note: str
) -> None:
    """The seed's 50 % against the interval of 50 deals (36 won: from 58.3 %; 10 won and
    5 unknown: up to 43.8 %)."""
    verdicts = ["won"] * won + ["unknown"] * unknown + ["lost"] * (50 - won - unknown)
    records = [
        {"seed": f"stats-{i}", "verdict": v, "seconds": 0.1, "nodes": 10, "best_score": 104}
        for i, v in enumerate(verdicts, 1)
    ]
    text = render_table({"colorado": records}, "python -m server.solver table", 3)
    assert f"The seed's 50 % {note}." in text


def test_stats_on_the_deals_an_earlier_run_left_unknown(tmp_path: Path, capsys) -> None:
    """``--unknown-in``: a change measured on the hard deals only (the deals of P1…PN that
    an earlier results file of the same game left unknown)."""
    earlier = tmp_path / "earlier.jsonl"
    records = [
        {"game": "balcony", "seed": "t1", "verdict": "unknown"},
        {"game": "balcony", "seed": "t2", "verdict": "won"},
        {"game": "colorado", "seed": "t3", "verdict": "unknown"},
        {"game": "balcony", "seed": "t4", "verdict": "unknown"},
        {"game": "balcony", "seed": "t9", "verdict": "unknown"},
    ]
    earlier.write_text("".join(json.dumps(r) + "\n" for r in records))
    path = tmp_path / "again.jsonl"
    args = ["stats", "balcony", "--deals", "5", "--budget", "5", "--nodes", "2000", "--prefix", "t"]
    assert main([*args, "--jsonl", str(path), "--unknown-in", str(earlier)]) == 0
    assert [r["seed"] for r in lines(path)] == ["t1", "t4"]
    out = capsys.readouterr().out
    assert f"balcony: the 2 deals of t1..t5 unknown in {earlier}" in out
    assert sum(int(row.split()[1]) for row in out.splitlines()[2:5]) == 2
