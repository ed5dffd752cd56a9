"""The Psi_th calibration figure: squeeze curves (pad strain energy against its normal force) and
Psi_th(E)."""

from __future__ import annotations

import numpy as np
import xarray as xr
from matplotlib.figure import Figure
from matplotlib.ticker import LogLocator, NullFormatter

from ipcgrasp.viz.figures.caption import NO_SPLIT, add_caption, caption_line, new_figure

SMALLEST_FORCE_FRACTION = 1e-2
"""Squeeze points below this fraction of the closing force (first touch, forces of 1e-11 N) are
not drawn: on a log axis they would stretch it over ten decades for nothing."""


def calibration_figure(squeeze: xr.Dataset) -> Figure:
    """Left: pad strain energy (J) against the pad's normal force on the block (N) per E, the
    closing force dashed; right: Psi_th (J) against E (Pa). Both log-log."""
    close_force = float(squeeze.attrs["close_force_N"])
    fig, ((ax_curve, ax_psi),) = new_figure(10, 4, ncols=2)
    for E in squeeze.E.values:
        curve = squeeze.sel(E=E)
        force, energy = curve.force.values, curve.strain_energy.values
        drawn = np.isfinite(force) & (force >= SMALLEST_FORCE_FRACTION * close_force) & (energy > 0)
        ax_curve.loglog(force[drawn], energy[drawn], "o-", ms=3, label=f"E = {E:.0e} Pa")
    ax_curve.axvline(close_force, color="k", ls="--", lw=1, label=f"closing force {close_force:g} N")
    ax_curve.set(xlabel="pad normal force on the block (N)", ylabel="pad strain energy (J)",
                 title="squeeze of one pad against a rigid block")
    ax_curve.legend(fontsize=8)
    ax_psi.loglog(squeeze.E.values, squeeze.psi_th.values, "s-")
    ax_psi.set(xlabel="pad Young's modulus E (Pa)", ylabel="Psi_th (J)",
               title=f"Psi_th: pad strain energy at {close_force:g} N")
    for ax in (ax_curve, ax_psi):  # labels only at decades: no crowded 2x10^1, 3x10^1 minor labels
        ax.xaxis.set_major_locator(LogLocator(base=10))
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.yaxis.set_minor_formatter(NullFormatter())
    steps = int(np.isfinite(squeeze.force.values).sum())
    add_caption(fig, caption_line(f"squeeze test, {squeeze.attrs.get('jaw', '?')} pad against a flat rigid block",
                                  NO_SPLIT, f"{squeeze.sizes['E']} squeeze(s), one per E, {steps} steps"),
                f"Points below {SMALLEST_FORCE_FRACTION * close_force:g} N (first touch) are not drawn.")
    return fig
