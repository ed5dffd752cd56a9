"""Locations inside the ipcgrasp repository (for a source checkout / editable install)."""

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
CONFIG_DIR = REPO_ROOT / "config"
DEFAULT_REGISTRY = CONFIG_DIR / "objects.yaml"
RESOURCES_REACH = REPO_ROOT / "resources" / "reach"
SHARED_REACH = REPO_ROOT.parent / "shared" / "data" / "reach"
