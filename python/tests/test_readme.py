"""The README's Python command lines run as written (the `python -c` lines of its `sh`
blocks; crates/cli/tests/readme.rs runs the rest), against the installed package."""

import pathlib
import shlex
import subprocess
import sys

README = pathlib.Path(__file__).resolve().parents[2] / "README.md"


def python_lines():
    out, in_sh = [], False
    for line in README.read_text().splitlines():
        t = line.strip()
        if t.startswith("```"):
            in_sh = not in_sh and t[3:].strip() in ("sh", "shell", "bash")
            continue
        if in_sh and (t.startswith("python -c") or t.startswith("python3 -c")):
            out.append(t)
    return out


def test_readme_python_lines_run_as_written(tmp_path):
    lines = python_lines()
    assert lines, "no python -c line in README.md"
    for line in lines:
        argv = shlex.split(line)
        argv[0] = sys.executable
        r = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True)
        assert r.returncode == 0, f"{line}\n{r.stdout}\n{r.stderr}"
        # The columns that matter are shown, not elided behind a configuration dict.
        assert "throughput_per_s" in r.stdout and "..." not in r.stdout, r.stdout
