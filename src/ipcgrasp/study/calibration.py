"""Psi_th calibration: squeeze one pad against a flat rigid block and read off the pad's strain
energy when its normal force reaches the closing force (docs/grasp_procedure.md, "The close rules").

The paper fixed one strain-energy threshold for every E, which means a different closing force
per E; calibrating Psi_th(E) for a known force (YuMi: 20 N) separates the two effects.
"""

from __future__ import annotations

import numpy as np
import trimesh
import xarray as xr

from ipcgrasp.engine.bodies import DeformableBody, KinematicBody
from ipcgrasp.engine.simulation import Simulation
from ipcgrasp.engine.solver.settings import SolverSettings
from ipcgrasp.grasp.gripper import Gripper
from ipcgrasp.grasp.params import CONTACTS_PER_PAD, SimParams

GAP = 5e-4  # m between the pad's front face and the block at the start
OVERSHOOT_FACTOR = 2.0  # squeeze until the force passes this multiple of the closing force
MAX_STEPS = 400


def squeeze_test(E: float, params: SimParams, close_force: float | None = None, gripper=None) -> dict:
    """Drive one pad (back face glued to its backing) at the closing speed against a fixed flat
    block until its normal force exceeds OVERSHOOT_FACTOR x close_force. Near and in contact the
    advance per step shrinks to dhat / 10 so the force curve is resolved. Returns arrays time (s),
    advance (m), force (N), strain_energy (J) and psi_th (J): the strain energy interpolated (in
    log force) at close_force. `gripper`: a description's name or path (None: the YuMi) whose pad
    params.jaw names."""
    close_force = params.close_force if close_force is None else close_force
    gripper = Gripper.from_description(gripper, params.jaw, params.pad_resolution)
    pad = gripper.pad_mesh()
    lo, hi = pad.nodes.min(axis=0), pad.nodes.max(axis=0)
    size = hi - lo
    block = trimesh.creation.box(extents=(2 * size[0], 2 * size[1], 0.01))
    block.apply_translation(((lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, GAP + 0.005))
    bodies = [DeformableBody("pad", pad.nodes, pad.tets, E, params.nu, params.density, pad.back_nodes),
              KinematicBody("block", block.vertices, block.faces)]
    settings = SolverSettings(dt=params.dt, gravity=(0.0, 0.0, 0.0), dhat=params.dhat, eps_v=params.eps_v,
                              newton_tolerance=params.newton_tolerance,
                              contact_force_scale=close_force / CONTACTS_PER_PAD)
    sim = Simulation(bodies, settings=settings)
    speed = params.closing_speed or gripper.closing_speed(gripper.max_opening, params.close_duration)
    advance, rows = 0.0, []
    for _ in range(MAX_STEPS):
        nominal = speed * params.dt
        gap = sim.body_distance("pad", "block", nominal + 2 * sim.dhat)
        step = nominal if gap > nominal + sim.dhat else (max(gap - sim.dhat, 0.1 * sim.dhat))
        pose = np.eye(4)
        pose[2, 3] = advance + step
        stats = sim.step({"pad": pose})
        advance += step * stats.driver_fraction
        force = float(np.linalg.norm(stats.contact_force[1, 0]))
        rows.append((sim.state.time, advance, force, stats.strain_energy["pad"]))
        if force > OVERSHOOT_FACTOR * close_force:
            break
    time_, adv, force, energy = map(np.array, zip(*rows))
    return {"time": time_, "advance": adv, "force": force, "strain_energy": energy,
            "psi_th": threshold_energy(force, energy, close_force)}


def threshold_energy(force, energy, close_force) -> float:
    """Strain energy at the first crossing of close_force, interpolated linearly in log force
    between the bracketing samples (nan if the force never reaches it)."""
    above = np.flatnonzero(force >= close_force)
    if not above.size:
        return float("nan")
    k = int(above[0])
    if k == 0 or force[k - 1] <= 0.0:
        return float(energy[k])
    w = (np.log(close_force) - np.log(force[k - 1])) / (np.log(force[k]) - np.log(force[k - 1]))
    return float(energy[k - 1] + w * (energy[k] - energy[k - 1]))


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
