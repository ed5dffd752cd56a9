"""A trial's trajectory (`grasp.trajectory`) against time, as a figure for a paper: the pads'
normal and friction forces on the object, the jaw opening, the object's height and rotation, with
the procedure's phases shaded and the instant the close rule fired marked."""

from __future__ import annotations

import io
import os

import numpy as np
import xarray as xr
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from ipcgrasp.documents import parse_json
from ipcgrasp.io import write_bytes_atomic
from ipcgrasp.viz.figures.caption import ONE_TRIAL, OUTSIDE_STUDY, add_caption, caption_line

PHASE_COLOURS = {"settle": "#f2f2f2", "squeeze": "#fde9d9", "lift": "#e0ecf8", "hold": "#e5f5e0",
                 "shake": "#f2e5f7", "critical_mass": "#fff7d6"}
PAD_COLOURS = ("#1f77b4", "#d62728")


def rotation_angle(rotations) -> np.ndarray:
    """Angle (rad) of each rotation matrix (n, 3, 3) relative to the first."""
    rotations = np.asarray(rotations, dtype=np.float64)
    relative = np.einsum("nij,kj->nik", rotations, rotations[0])
    return np.arccos(np.clip((np.trace(relative, axis1=1, axis2=2) - 1.0) / 2.0, -1.0, 1.0))


def phase_spans(ds: xr.Dataset) -> list[tuple[str, float, float]]:
    """(phase name, start s, end s) of each run of equal phases; a step covers (t - dt, t]."""
    names = ds.phase.attrs["flag_meanings"].split()
    time, phase = ds.time.values, ds.phase.values
    dt = float(time[1] - time[0]) if len(time) > 1 else 0.0
    spans, start = [], 0
    for k in range(1, len(time) + 1):
        if k == len(time) or phase[k] != phase[start]:
            spans.append((names[phase[start]], float(time[start]) - dt, float(time[k - 1])))
            start = k
    return spans


def caption_text(ds: xr.Dataset) -> str:
    """The caption line (object and grasp, split, N = 1 trial), then seed, parameters and outcome
    of the trial and the ipcgrasp version, from the file's attributes."""
    a = ds.attrs
    params = parse_json(a["params"], "the trajectory's params attribute") if "params" in a else {}
    outcome = "success" if a.get("success") else f"failed: {a.get('failure_mode')} ({a.get('reason')})"
    setting = []
    if "E" in params:
        setting.append(f"E = {params['E']:g} Pa")
    if "mu" in params:
        setting.append(f"mu = {params['mu']:g}")
    setting += [f"{params[k]} {label}" for k, label in (("jaw", "jaw"), ("close_rule", "rule")) if k in params]
    trial = f", trial {a['trial']}" if "trial" in a else ""
    data = f"{a.get('object', 'object')} grasp {a.get('grasp', '?')}{trial}"
    line = caption_line(data, a.get("split", OUTSIDE_STUDY), ONE_TRIAL)
    return f"{line} Seed {a.get('seed')}: {', '.join(setting)}; {outcome}. ipcgrasp {a.get('ipcgrasp_version', '?')}."


def trajectory_figure(ds: xr.Dataset) -> Figure:
    """Five panels over simulated time (s): pad normal and friction forces on the object (N), jaw
    opening (mm), object height (mm, lowest point above the ground) and object rotation (deg,
    from the first step); phases shaded, the closing instant a dashed line; caption below."""
    time = ds.time.values
    fig = Figure(figsize=(7.0, 9.0), layout="constrained")
    axes = fig.subplots(5, 1, sharex=True)
    for pad in range(2):
        style = {"color": PAD_COLOURS[pad], "linewidth": 2.2 - pad, "label": f"pad {pad}"}
        axes[0].plot(time, ds.pad_normal_force.sel(pad=pad), **style)
        axes[1].plot(time, ds.pad_friction_force.sel(pad=pad), **style)
    axes[0].set_ylabel("normal force\non object [N]")
    axes[1].set_ylabel("friction force\non object [N]")
    axes[2].plot(time, ds.jaw_opening * 1e3, color="k")
    axes[2].set_ylabel("jaw opening [mm]")
    axes[3].plot(time, ds.object_height * 1e3, color="k")
    axes[3].set_ylabel("object height [mm]")
    axes[4].plot(time, np.degrees(rotation_angle(ds.object_rotation.values)), color="k")
    axes[4].set_ylabel("object rotation [deg]")
    axes[4].set_xlabel("simulated time [s]")
    close = float(ds.attrs.get("close_time", np.nan))
    spans = phase_spans(ds)
    for ax in axes:
        for name, start, end in spans:
            ax.axvspan(start, end, color=PHASE_COLOURS.get(name, "#eeeeee"), zorder=0, linewidth=0)
        if np.isfinite(close):
            ax.axvline(close, color="0.3", linestyle="--", linewidth=1)
        ax.grid(True, alpha=0.3)
        ax.tick_params(labelsize=9)
    handles, labels = axes[0].get_legend_handles_labels()
    seen = list(dict.fromkeys(name for name, _, _ in spans))
    handles += [Patch(color=PHASE_COLOURS.get(n, "#eeeeee"), label=n.replace("_", " ")) for n in seen]
    if np.isfinite(close):
        handles.append(Line2D([], [], color="0.3", linestyle="--", label="close rule fired"))
    # above the panels, not on them: inside the force panel it covered the force curves
    axes[0].legend(handles=handles, fontsize=7, ncol=5, loc="lower center", bbox_to_anchor=(0.5, 1.0), frameon=False)
    axes[0].set_xlim(time[0] - (time[1] - time[0] if len(time) > 1 else 0.0), time[-1])
    fig.suptitle("Grasp trial trajectory", fontsize=11)
    add_caption(fig, caption_text(ds))
    return fig


def plot_trajectory(ds: xr.Dataset, path: str | os.PathLike, dpi: int = 200) -> None:
    """Write `trajectory_figure` as PNG to `path` atomically."""
    fig = trajectory_figure(ds)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight")
    write_bytes_atomic(path, buffer.getvalue())
