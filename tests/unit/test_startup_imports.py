"""The command line and the web app start without the heavy analysis and queue libraries.

scipy.stats, matplotlib, sacrebleu and scikit-learn take seconds to import; the commands and
views that need them import them where they are used. Celery and boto3 are loaded only by
what talks to a broker or a bucket.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HEAVY = ("scipy.stats", "matplotlib", "sacrebleu", "sklearn", "celery", "boto3")
REPO = Path(__file__).resolve().parents[2]


def loaded_after(code: str, tmp_path: Path) -> list[str]:
    """Run ``code`` in a fresh interpreter; return the heavy modules it left loaded."""
    probe = f"import sys\n{code}\nprint('LOADED:', *(m for m in {HEAVY!r} if m in sys.modules))"
    env = {"LEADERBOARD_INSTANCE_DIR": str(tmp_path / "instance"), "PATH": "/usr/bin:/bin"}
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO, env=env, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    last = out.stdout.splitlines()[-1].split()
    assert last[0] == "LOADED:", out.stdout
    return last[1:]


def test_help_loads_none_of_them(tmp_path: Path) -> None:
    code = (
        "sys.argv = ['leaderboard', '--help']\n"
        "from leaderboard.cli import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass"
    )
    assert loaded_after(code, tmp_path) == []


def test_the_web_app_loads_none_of_them(tmp_path: Path) -> None:
    assert loaded_after("import leaderboard.web", tmp_path) == []
    code = "from leaderboard.web import create_app\ncreate_app()"
    assert loaded_after(code, tmp_path) == []


def test_the_generation_family_and_a_commands_connections_load_none_of_them(
    tmp_path: Path,
) -> None:
    # Every database command opens its connections and may load any family (sacrebleu is
    # loaded by what scores or checks text, not by the family's definition).
    build = (
        "from leaderboard.config import load_settings\n"
        "from leaderboard.resources import build\nbuild(load_settings())"
    )
    code = f"import leaderboard.tasks.families.generation.family\n{build}"
    assert loaded_after(code, tmp_path) == []
    # The connections build none of the pages.
    code = (
        f"{build}\n"
        "assert not any(m.startswith('leaderboard.web') for m in sys.modules), "
        "[m for m in sys.modules if m.startswith('leaderboard.web')]"
    )
    assert loaded_after(code, tmp_path) == []


def test_the_probe_sees_a_heavy_module_when_one_is_loaded(tmp_path: Path) -> None:
    # The probe itself can fail: loading one of them is seen.
    assert loaded_after("import scipy.stats", tmp_path) == ["scipy.stats"]


def test_a_family_is_loaded_alone_and_listing_loads_all(tmp_path: Path) -> None:
    # A command on one task imports its family only; listing the families imports the six.
    code = (
        "from leaderboard.tasks.families import BUILTINS, all_families, get_family\n"
        "assert get_family('cqa').name == 'cqa'\n"
        "others = [m for m in sys.modules if m.startswith('leaderboard.tasks.families.')\n"
        "          and m.split('.')[3] in set(BUILTINS) - {'cqa'}]\n"
        "assert others == [], others\n"
        "assert [f.name for f in all_families()] == list(BUILTINS)"
    )
    assert loaded_after(code, tmp_path) == []


def test_a_table_loads_no_numpy(tmp_path: Path) -> None:
    # The table command, the services it calls and the CQA family's definitions need no numpy
    # (0.1-0.2 s): the run format, the scoring kernels and resampling import it where used.
    code = (
        "import leaderboard.cli.tables, leaderboard.services.results.tables\n"
        "from leaderboard.tasks.families import get_family\n"
        "get_family('cqa')\n"
        "assert 'numpy' not in sys.modules"
    )
    assert loaded_after(code, tmp_path) == []
