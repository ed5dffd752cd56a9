"""The gripper that recorded the physical grasps of a data directory in the REACH layout: the one
an `ipcgrasp data import` names in the manifest it writes into its DEST (`data.own`), else the
REACH data's YuMi.

With no heavy import (no mesh or simulation module): the workflow's Snakefile checks it when it
parses (`study.config.check_data_gripper`), and every snakemake process parses it.
"""

from __future__ import annotations

from pathlib import Path

from ipcgrasp.documents import load_json

MANIFEST = "ipcgrasp_import.json"
"""What an import wrote into DEST (the files it created, the source and its SHA-256)."""
REACH_GRIPPER = "yumi"
"""The gripper the REACH physical grasps were recorded with (docs/data.md, "Gripper")."""


def recorded_gripper(data_dir: Path) -> str | None:
    """The gripper the physical trials of `data_dir` were recorded with, when `ipcgrasp data import`
    wrote it (its manifest's `gripper`: the description's name), else None (e.g. the REACH data)."""
    recorded = _manifest_of(data_dir)
    return recorded.get("gripper") if recorded else None


def recorded_gripper_setting(data_dir: Path) -> str | None:
    """What `--gripper` or the study's `gripper:` takes for the gripper the trials of `data_dir`
    were recorded with: the description file an import read (its manifest's `gripper_file`), or
    the shipped name; None without a manifest."""
    recorded = _manifest_of(data_dir)
    return (recorded.get("gripper_file") or recorded.get("gripper")) if recorded else None


class OtherGripperWarning(UserWarning):
    """A trial command simulates a gripper other than the one that recorded the physical grasps
    it starts from: `recorded` and `simulated` are the two descriptions' names."""

    def __init__(self, object_name: str, data_dir, recorded: str, simulated: str, setting: str):
        super().__init__(
            f"the physical grasps of {object_name} in {data_dir} were recorded with the {recorded}, but --gripper is "
            f"{simulated}: each trial places the {simulated} at the {recorded}'s gripper pose (another gripper "
            f"frame and fingers, docs/grippers.md), so its outcome and R are not comparable with the physical "
            f"robustness, which is the {recorded}'s; fix: --gripper {setting}, or give the {simulated}'s own grasp "
            "poses (simulate --mesh FILE --mass KG --pose FILE.json, docs/simulate_mesh.md)")
        self.recorded, self.simulated = recorded, simulated


def recorded_with(data_dir: Path) -> tuple[str, str]:
    """(name, setting) of the gripper that recorded the physical grasps of a REACH-layout
    `data_dir`: an import's gripper (its manifest; the setting is the description file it read,
    or the name), else the REACH data's YuMi."""
    name = recorded_gripper(data_dir)
    return (name, recorded_gripper_setting(data_dir)) if name else (REACH_GRIPPER, REACH_GRIPPER)


def other_gripper_warning(data_dir: Path, object_name: str, simulated: str) -> OtherGripperWarning | None:
    """The warning for simulating the gripper named `simulated` on the physical grasps of
    `object_name` in `data_dir` when another gripper recorded them (`recorded_with`); else None."""
    recorded, setting = recorded_with(data_dir)
    if recorded == simulated:
        return None
    return OtherGripperWarning(object_name, data_dir, recorded, simulated, setting)


def _manifest_of(data_dir: Path) -> dict | None:
    manifest = Path(data_dir) / MANIFEST
    if not manifest.is_file():
        return None
    recorded = load_json(manifest)
    return recorded if isinstance(recorded, dict) else None
