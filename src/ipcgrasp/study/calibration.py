"""Psi_th calibration: squeeze one pad against a flat rigid block and read off the pad's strain
energy when its normal force reaches the closing force (docs/grasp_procedure.md, "The close rules").

The paper fixed one strain-energy threshold for every E, which means a different closing force
per E; calibrating Psi_th(E) for a known force (YuMi: 20 N) separates the two effects.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from ipcgrasp.grasp.pad_squeeze import GAP, squeeze_test
from ipcgrasp.grasp.params import SimParams


def calibrate(E_values, close_force: float = 20.0, params: SimParams | None = None, progress=None,
              gripper=None) -> xr.Dataset:
    """Squeeze tests for each Young's modulus (Pa): force and strain-energy curves over the step
    index and Psi_th(E) for `close_force` (N), as an xarray Dataset."""
    params = params or SimParams()
    curves = []
    for E in E_values:
        curves.append(squeeze_test(float(E), params, close_force, gripper))
        if progress:
            progress(E)
    n = max(len(c["time"]) for c in curves)

    def padded(key):
        out = np.full((len(curves), n), np.nan)
        for i, c in enumerate(curves):
            out[i, :len(c[key])] = c[key]
        return out

    ds = xr.Dataset(
        {
            "time": (("E", "step"), padded("time"), {"units": "s", "long_name": "simulated time"}),
            "advance": (("E", "step"), padded("advance"),
                        {"units": "m", "long_name": "backing advance towards the block"}),
            "force": (("E", "step"), padded("force"), {"units": "N", "long_name": "pad normal force on the block"}),
            "strain_energy": (("E", "step"), padded("strain_energy"),
                              {"units": "J", "long_name": "pad strain energy Psi"}),
            "psi_th": (("E",), np.array([c["psi_th"] for c in curves]),
                       {"units": "J", "long_name": "Psi_th: pad strain energy at the closing force"}),
        },
        coords={"E": ("E", np.asarray(E_values, dtype=float), {"units": "Pa", "long_name": "pad Young's modulus"}),
                "step": np.arange(n)},
        attrs={"close_force_N": float(close_force), "jaw": params.jaw, "closing_gap_m": GAP},
    )
    return ds
