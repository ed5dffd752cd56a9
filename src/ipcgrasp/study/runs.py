"""The study's stages as functions (the workflow scripts only read the `snakemake` object and
call these): mesh checks, grid, sensitivity and evaluation cells of simulated trials, baseline
predictions, runtime vs mesh resolution, and the Psi_th look-up from the calibration.

Every trial's seed is `grasp.perturbation.trial_seed(root_seed, grasp, trial)`, so every model and
every setting sees the same perturbed grasp for the same (grasp, trial). Trials run through
`grasp.simulate.run_variants` (several friction values and close rules of one trial together):
one that raises is recorded as failure mode "error" with the exception as its reason; the cell
goes on.
"""

from __future__ import annotations

import dataclasses
import inspect
import os
import time
import traceback
import warnings
from collections.abc import Callable, Mapping, Sequence

import numpy as np
import trimesh
import xarray as xr

from ipcgrasp.baselines.interface import MODELS, Prediction
from ipcgrasp.data.reach import PhysicalGrasps, load_object, load_physical_grasps
from ipcgrasp.geometry.mesh import mass_properties, validate_mesh
from ipcgrasp.geometry.tetra import tet_volumes
from ipcgrasp.grasp.description import load_description
from ipcgrasp.grasp.gripper import Gripper
from ipcgrasp.grasp.object import GraspObject
from ipcgrasp.grasp import simulate
from ipcgrasp.grasp.params import SimParams
from ipcgrasp.grasp.simulate import run_variants
from ipcgrasp.interrupts import reraise_interrupt
from ipcgrasp.study.cube import MODEL_INFO, prediction_cell, simulation_cell
from ipcgrasp.study.labels import ALWAYS_SUCCESS
from ipcgrasp.study.replay import fixed_params_attr


def load_study_object(data_dir: str | os.PathLike, name: str, registry) -> tuple[GraspObject, PhysicalGrasps]:
    """The object (mesh validated, mass from the registry) and its physical grasps."""
    mesh_path, mass = load_object(data_dir, name, registry)
    return GraspObject.from_file(mesh_path, mass, name), load_physical_grasps(data_dir, name)


def study_params(sim: Mapping, **settings) -> SimParams:
    """SimParams from the config's fixed `sim` fields and one cell's settings (E, mu, jaw,
    close_rule, psi_th); unknown field names raise ValueError naming them."""
    values = {**sim, **settings}
    unknown = sorted(set(values) - set(SimParams.field_names()))
    if unknown:
        raise ValueError(f"unknown simulation parameters {unknown}; SimParams has {', '.join(SimParams.field_names())}")
    return SimParams(**values)


def best_params(sim: Mapping, best: Mapping) -> SimParams:
    """SimParams of the best grid setting (results/grid/best.json: E, mu, jaw, rule, psi_th)."""
    settings = {"E": best["E"], "mu": best["mu"], "jaw": best["jaw"], "close_rule": best["rule"]}
    if best["rule"] == "psi":
        settings["psi_th"] = best["psi_th"]
    return study_params(sim, **settings)


def trial_seeds(root_seed: int, grasps: Sequence[int], n_trials: int) -> np.ndarray:
    """(G, T) seeds: `grasp.simulate.trial_seeds` of each grasp index (G may be 0)."""
    seeds = [simulate.trial_seeds(root_seed, int(g), n_trials) for g in grasps]
    return np.array(seeds, dtype=np.int64).reshape(len(seeds), n_trials)


def simulate_cell(obj: GraspObject, physical: PhysicalGrasps, grasps: Sequence[int], params: SimParams,
                  n_trials: int, root_seed: int, scalars: Mapping, attrs: Mapping | None = None,
                  log: Callable[[str], None] | None = None, gripper: str | None = None) -> xr.Dataset:
    """Simulate n_trials perturbed trials of each grasp index in `grasps` and return the cell
    (`cube.simulation_cell`) with `scalars` as its scalar coordinates. `log` gets one line per trial
    (and the traceback of a trial that raised). `gripper`: a description's name or file (None: the
    YuMi), carrying the pad params.jaw."""
    return simulate_cells(obj, physical, grasps, [params], n_trials, root_seed, [scalars], attrs, log, gripper)[0]


def simulate_cells(obj: GraspObject, physical: PhysicalGrasps, grasps: Sequence[int], variants: Sequence[SimParams],
                   n_trials: int, root_seed: int, scalars: Sequence[Mapping], attrs: Mapping | None = None,
                   log: Callable[[str], None] | None = None, gripper: str | None = None) -> list[xr.Dataset]:
    """`simulate_cell` for each SimParams of `variants` (differing only in mu and the close rule's
    fields, `grasp.procedure.FRICTION_FIELDS` and `RULE_FIELDS`) with its `scalars`: each trial
    runs once for all of them as long as they do not matter (`grasp.simulate.run_variants`), and
    each cell is the one `simulate_cell` gives with that variant."""
    variants, scalars = list(variants), list(scalars)
    if len(scalars) != len(variants):
        raise ValueError(f"simulate_cells needs one scalars mapping per variant: {len(variants)} variants, "
                         f"{len(scalars)} mappings")
    grasps = [int(g) for g in grasps]
    params = variants[0]
    hand = Gripper.from_description(gripper, params.jaw, params.pad_resolution)
    seeds = trial_seeds(root_seed, grasps, n_trials)
    results = [[] for _ in variants]  # per variant, per grasp: the trials
    for g, row_seeds in zip(grasps, seeds):
        rows = [[] for _ in variants]
        for t, seed in enumerate(row_seeds):
            trial = run_variants(obj, physical.object_poses[g], physical.grasp_poses[g], variants, int(seed), log,
                                 gripper=hand)
            for variant, row, result in zip(variants, rows, trial):
                if log:
                    outcome = "success" if result.success else result.failure_mode
                    named = f" ({_variant_name(variant)})" if len(variants) > 1 else ""
                    log(f"grasp {g} trial {t}{named}: {outcome} ({result.reason}), {result.wall_time:.1f} s")
                row.append(result)
        for cell_results, row in zip(results, rows):
            cell_results.append(row)
    gripper_name = os.fspath(gripper) if gripper is not None else hand.name
    cells = []
    for variant, cell_results, cell_scalars in zip(variants, results, scalars):
        psi_th = variant.psi_th if variant.close_rule == "psi" else float("nan")
        # sim_params and gripper: what a replay needs (study.replay)
        cell_attrs = {**(attrs or {}), "sim_params": fixed_params_attr(variant), "gripper": gripper_name}
        cell = simulation_cell(cell_results, grasps, seeds, physical.results[grasps], cell_scalars, psi_th, cell_attrs)
        if variant.critical_mass:
            cell.critical_mass.attrs.update(max_mass=variant.max_mass, mass_rate=variant.mass_rate,
                                            slip_speed=variant.slip_speed)
        cells.append(cell)
    return cells


def _variant_name(variant: SimParams) -> str:
    rule = f"psi {variant.psi_th:.3g} J" if variant.close_rule == "psi" else f"force {variant.close_force:g} N"
    return f"mu {variant.mu:g}, {rule}"


def always_success(obj, object_pose, grasp_pose, params, seed) -> Prediction:
    """The trivial predictor: every grasp succeeds (what the paper's F1 rewards on a mostly
    successful object)."""
    return Prediction(True, 1.0, 0.0, {"reason": "always success"})


SETTINGS_KEYS = ("params", "keywords")
"""A model's settings: {"params": SimParams fields that replace those of the trial's params,
"keywords": keyword arguments of its predict function}; either may be left out. Two groups, not
one flat dict, because a name may be both (MuJoCo's `dt` is not the simulator's `dt`)."""


def predictor(name: str, settings: Mapping | None = None) -> Callable:
    """predict(obj, object_pose, grasp_pose, params, seed) -> Prediction of a model (ALWAYS_SUCCESS
    or a name of baselines.MODELS) with its `settings` (SETTINGS_KEYS), the one way every model
    gets its settings. Bad settings raise here, naming them, before any trial runs."""
    predict = always_success if name == ALWAYS_SUCCESS else MODELS[name]
    settings = dict(settings or {})
    unknown = sorted(set(settings) - set(SETTINGS_KEYS))
    if unknown:
        raise ValueError(f"model {name!r}: settings have the groups {unknown}; use {SETTINGS_KEYS} "
                         "(SimParams fields under params, the predict function's keywords under keywords)")
    fields, keywords = dict(settings.get("params") or {}), dict(settings.get("keywords") or {})
    if not (fields or keywords):
        return predict
    try:
        dataclasses.replace(SimParams(), **fields)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"model {name!r}: bad simulation settings {fields}: {exc}") from None
    try:
        inspect.signature(predict).bind(None, None, None, None, 0, **keywords)
    except TypeError:
        raise ValueError(f"model {name!r} takes no keyword settings {sorted(keywords)}") from None

    def configured(obj, object_pose, grasp_pose, params, seed):
        return predict(obj, object_pose, grasp_pose, dataclasses.replace(params, **fields) if fields else params,
                       seed, **keywords)

    configured.__name__ = configured.__qualname__ = f"{name}_configured"
    return configured


def predict_cell(predict: Callable, obj: GraspObject, physical: PhysicalGrasps, grasps: Sequence[int],
                 params: SimParams, n_trials: int, root_seed: int, scalars: Mapping,
                 attrs: Mapping | None = None, log: Callable[[str], None] | None = None,
                 variables: Sequence[str] | None = None) -> xr.Dataset:
    """A model's predictions (`predict(obj, object_pose, grasp_pose, params, seed)`, e.g.
    `predictor(name, settings)`) on the same grasps and trial seeds as the simulator; a prediction
    that raises counts as a failure with score NaN and the exception as its reason. `variables`:
    the info variables kept (`cube.INFO_VARIABLES`); default MODEL_INFO of scalars["model"]."""
    grasps = [int(g) for g in grasps]
    seeds = trial_seeds(root_seed, grasps, n_trials)
    if variables is None:
        variables = MODEL_INFO.get(scalars.get("model"), ())
    shape = seeds.shape
    success, score = np.zeros(shape, dtype=bool), np.full(shape, np.nan)
    runtime, reason = np.zeros(shape), np.full(shape, "", dtype=object)
    info = [[None] * shape[1] for _ in range(shape[0])]
    for i, g in enumerate(grasps):
        for t, seed in enumerate(seeds[i]):
            started = time.perf_counter()
            try:
                p = predict(obj, physical.object_poses[g], physical.grasp_poses[g], params, int(seed))
                success[i, t], score[i, t], runtime[i, t] = p.success, p.score, p.runtime
                reason[i, t], info[i][t] = str(p.info.get("reason", "")), p.info
            except Exception as exc:  # noqa: BLE001 - one failing prediction must not end the evaluation
                reraise_interrupt(exc)
                runtime[i, t] = time.perf_counter() - started
                reason[i, t] = f"error: {type(exc).__name__}: {exc}"
                if log:
                    log(traceback.format_exc())
            if log:
                log(f"grasp {g} trial {t}: {'success' if success[i, t] else 'failure'} ({reason[i, t]}), "
                    f"{runtime[i, t]:.2f} s")
    return prediction_cell(success, score, runtime, reason, grasps, seeds, physical.results[grasps], scalars, attrs,
                           info=info, variables=variables)


def resolution_cell(obj: GraspObject, physical: PhysicalGrasps, grasp: int, subdivisions: int, params: SimParams,
                    n_trials: int, root_seed: int, scalars: Mapping, attrs: Mapping | None = None,
                    log: Callable[[str], None] | None = None, gripper: str | None = None) -> xr.Dataset:
    """Runtime vs mesh resolution (the paper's Table V): one grasp's trials with the object's
    mesh subdivided `subdivisions` times (trimesh's midpoint subdivision, 4x the faces each, the
    same shape), with its vertex and face counts; `gripper` as `simulate_cell`."""
    mesh = obj.mesh
    for _ in range(subdivisions):
        mesh = mesh.subdivide()
    fine = GraspObject.from_mesh(mesh, obj.mass, obj.name)
    cell = simulate_cell(fine, physical, [grasp], params, n_trials, root_seed,
                         {**scalars, "subdivisions": int(subdivisions)}, attrs, log, gripper)
    return cell.assign(n_vertices=((), len(mesh.vertices), {"units": "1", "long_name": "object mesh vertices"}),
                       n_faces=((), len(mesh.faces), {"units": "1", "long_name": "object mesh faces"}))


def object_mesh_report(data_dir: str | os.PathLike, name: str, registry) -> dict:
    """What `validate_mesh` checked and repaired on one object's mesh, and its mass properties (SI)."""
    path, mass = load_object(data_dir, name, registry)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = validate_mesh(trimesh.load(path, process=True, force="mesh"), str(path))
    props = mass_properties(report.mesh, mass)
    return {"path": str(path), "watertight": report.watertight, "winding_consistent": report.winding_consistent,
            "n_vertices": report.n_vertices, "n_faces": report.n_faces, "volume_m3": report.volume,
            "extents_m": report.extents.tolist(), "repairs": list(report.repairs), "mass_kg": props.mass,
            "density_kg_m3": props.density, "center_of_mass_m": props.center_of_mass.tolist(),
            "principal_inertia_kg_m2": np.linalg.eigvalsh(props.inertia).tolist()}


def pad_mesh_report(kind: str, resolution: float, gripper: str | None = None) -> dict:
    """Node/tet counts, volume and checks of the tet mesh of one pad variant of `gripper` (a
    description's name or file; None: the YuMi)."""
    pad = Gripper.from_description(gripper, kind, resolution).pad_mesh()
    volumes = tet_volumes(pad.nodes, pad.tets)
    surface = pad.surface_mesh()
    surface.remove_unreferenced_vertices()
    if not (volumes.min() > 0.0 and surface.is_watertight and pad.back_nodes.size):
        raise ValueError(f"{kind} pad mesh at resolution {resolution} m is unusable: min tet volume "
                         f"{volumes.min():.3g} m^3, watertight boundary {surface.is_watertight}, "
                         f"{pad.back_nodes.size} back-face nodes")
    return {"n_nodes": int(len(pad.nodes)), "n_tets": int(len(pad.tets)),
            "n_surface_faces": int(len(pad.surface_faces)), "n_back_nodes": int(pad.back_nodes.size),
            "volume_m3": float(volumes.sum()), "min_tet_volume_m3": float(volumes.min()),
            "dimensions_m": list(pad.dimensions), "resolution_m": float(resolution)}


def mesh_report(data_dir: str | os.PathLike, objects: Sequence[str], registry, pad_resolution: float,
                gripper: str | None = None) -> dict:
    """Stage meshes: every object's validation report and the tet meshes of every pad variant of
    `gripper` (None: the YuMi). A mesh that cannot be used raises (geometry.MeshError naming the
    file and the fix)."""
    pads = load_description(gripper).pad_names
    return {"objects": {name: object_mesh_report(data_dir, name, registry) for name in objects},
            "pads": {kind: pad_mesh_report(kind, pad_resolution, gripper) for kind in pads}}


def psi_th_at(table: Mapping, E: float) -> float:
    """Psi_th (J) at Young's modulus E (Pa) from a calibration table {"E": [...], "psi_th": [...]}:
    the tabulated value at E, else interpolated linearly in (log E, log Psi_th) between the
    bracketing moduli. Raises ValueError when E is outside the table or Psi_th is undefined there."""
    moduli = np.asarray(table["E"], dtype=np.float64)
    psi = np.asarray(table["psi_th"], dtype=np.float64)
    order = np.argsort(moduli)
    moduli, psi = moduli[order], psi[order]
    exact = np.flatnonzero(np.isclose(moduli, E, rtol=1e-9, atol=0.0))
    if exact.size:
        value = float(psi[exact[0]])
    elif moduli[0] < E < moduli[-1]:
        k = int(np.searchsorted(moduli, E))
        w = (np.log(E) - np.log(moduli[k - 1])) / (np.log(moduli[k]) - np.log(moduli[k - 1]))
        value = float(np.exp((1.0 - w) * np.log(psi[k - 1]) + w * np.log(psi[k])))
    else:
        raise ValueError(f"E = {E:g} Pa is outside the calibrated moduli {moduli.tolist()}; "
                         "add it to the calibration's E values")
    if not (np.isfinite(value) and value > 0.0):
        raise ValueError(f"the calibration has no Psi_th at E = {E:g} Pa (the pad force never reached the "
                         "closing force in the squeeze test); raise the squeeze test's travel or pick another E")
    return value
