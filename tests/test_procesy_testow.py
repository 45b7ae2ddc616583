"""Procesy, które uruchamiają testy (``tests/processes.py``), widzą to samo odosobnienie co testy w procesie pytest:
dane pochodne trybu serwera w folderze testów, nie w ``~/.cache`` użytkownika, i bez jego ``chroma-rag.toml``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from processes import env

_WHERE = ("import os; from chroma_rag.storage.store import cache_root; "
          "print(cache_root()); print(os.environ['XDG_CONFIG_HOME'])")


def test_a_child_process_keeps_derived_data_and_settings_in_the_tests_folders(local_cache: Path) -> None:
    result = subprocess.run([sys.executable, "-c", _WHERE], capture_output=True, text=True, env=env(), check=True)
    cache, config_home = result.stdout.split()
    assert Path(cache) == local_cache and config_home == os.environ["XDG_CONFIG_HOME"], result.stdout
