"""Are the cube verdicts converged? The study's solver settings against dt / 4, tolerance / 10, dhat / 2.

The acceptance check for an engine or grasp-procedure change: a verdict may move only toward
the reference. Runs the 25 physical cube grasps x `--trials` perturbed trials (trial k of grasp g
seeded `trial_seed(seed, g, k)`, as the study and `bench_cube_robustness.py`) under each close
rule, twice: at the study's setting (config/config.yaml: its `sim` block, root seed, and the
calibration's cell: E_ref 1e8 Pa, sensitivity_mu 0.4, the rounded jaw; the psi rule at
SimParams' Psi_th, the calibration's value at that cell) and at the reference: dt / 4,
newton_tolerance / 10 and dhat / 2, where dhat is the value the study's setting resolves for
each trial's own scene (SimParams.dhat None: 1e-3 x the diagonal of the trial's initial scene)
and newton_budget x 4 (the same allowance per step). Every trial records the trajectory.

Prints per rule, settings against reference, trial by trial: the labels that differ (the
verdict and the failure label, "held" on success, "raised" when the trial raised); the closing-
force error |F_close - F_close_ref| of the trials that closed in both (per trial the larger of
the two pads', N and relative to the reference's force: median, 95th percentile, largest); the
pad normal force during the hold (per trial the mean over the hold's steps of the mean of both
pads, N) against the reference's (median and largest difference); the median wall time (s) and
Newton iterations per trial of each setting (the first trial of each worker includes loading the
compiled kernels); the dhat each used (um) and their ratio, 0.5 in every trial.

    .venv/bin/python benchmarks/bench_convergence.py --out before.json
    (change the engine or the procedure)
    .venv/bin/python benchmarks/bench_convergence.py --out after.json --compare before.json

`--compare` lists every trial whose study-setting label changed against the earlier run and
whether it moved toward the reference or away from it. A change to the engine or the procedure
invalidates a stored reference, so both settings are rerun by default; to rerun only the study
setting against a stored reference when neither has changed: `--settings-only --from
before.json` (the stored setting must be the same one; the file names the commit it was
measured at). `--grasps 0 --trials 1` is a smoke check (about 10 s with the kernels compiled).
"""

import argparse
import collections
import dataclasses
import json
import os
import platform
import statistics
import time
import warnings
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

import numpy as np
import yaml

from ipcgrasp import GraspObject, SimParams, simulate_grasp
from ipcgrasp.data.location import resolve_data_dir
from ipcgrasp.data.reach import load_object, load_physical_grasps
from ipcgrasp.grasp.ipc_backend import IpcBackend
from ipcgrasp.grasp.pose import PoseRoundingWarning
from ipcgrasp.grasp.simulate import trial_seeds
from ipcgrasp.study.provenance import git_commit

CONFIG = Path(__file__).resolve().parents[1] / "config" / "config.yaml"
OBJECT = "cube_3cm"
SETTINGS, REFERENCE = "settings", "reference"
DT_SCALE, TOLERANCE_SCALE, DHAT_SCALE = 0.25, 0.1, 0.5
"""The reference against the study's setting: time step, Newton tolerance, contact activation distance."""
PROGRESS_LINES = 20
"""Progress lines per setting run."""

_CUBE = {}  # per worker process: "object" (GraspObject) and "physical" (its physical grasps)


class ScaledDhat:
    """The IPC backend with the contact activation distance `scale` x the one the trial's params
    resolve to (params.dhat, or for None the engine's 1e-3 x the trial's initial scene diagonal);
    `dhat` (m) is what the trial's scene used."""

    def __init__(self, scale: float):
        self.scale = scale
        self.dhat = float("nan")

    def __call__(self, obj, object_pose, tooltip_poses, params, gripper):
        backend = IpcBackend(obj, object_pose, tooltip_poses, params, gripper)
        if self.scale != 1.0:
            scaled = dataclasses.replace(params, dhat=self.scale * backend.sim.dhat)
            backend = IpcBackend(obj, object_pose, tooltip_poses, scaled, gripper)
        self.dhat = backend.sim.dhat
        return backend


def study_setting(config: dict, E: float, mu: float) -> dict:
    """The study's setting of the trials (besides rule, grasp and trial): SimParams fields but
    close_rule (the config's `sim` block, E in Pa, mu, the calibration's jaw), the dhat scale and
    the root seed."""
    params = SimParams(**config["sim"], E=E, mu=mu, jaw=config["calibration"]["jaw"]).to_dict()
    del params["close_rule"]
    return {"params": params, "dhat_scale": 1.0, "root_seed": config["seed"]}


def reference_setting(study: dict) -> dict:
    """The refined reference of a study setting: dt x DT_SCALE, newton_tolerance x
    TOLERANCE_SCALE, dhat x DHAT_SCALE, newton_budget / DT_SCALE (the same Newton iterations per step)."""
    p = study["params"]
    params = {**p, "dt": p["dt"] * DT_SCALE, "newton_tolerance": p["newton_tolerance"] * TOLERANCE_SCALE,
              "newton_budget": round(p["newton_budget"] / DT_SCALE)}
    return {**study, "params": params, "dhat_scale": study["dhat_scale"] * DHAT_SCALE}


def load_cube(data_dir: str) -> None:
    """Load the cube and its physical grasps into this process (a pool worker's initializer)."""
    warnings.simplefilter("ignore", PoseRoundingWarning)  # the REACH poses' rounding, known and repaired
    mesh_path, mass = load_object(data_dir, OBJECT)
    _CUBE["object"] = GraspObject.from_file(mesh_path, mass, OBJECT)
    _CUBE["physical"] = load_physical_grasps(data_dir, OBJECT)


def hold_force(trajectory) -> float:
    """Mean over the hold's steps of the mean normal force of both pads on the object (N); NaN
    when the trial never held."""
    forces = [np.mean(step.pad_normal_force) for step in trajectory if step.phase == "hold"]
    return float(np.mean(forces)) if forces else float("nan")


def run_trial(job) -> dict:
    """One trial as a row: setting, rule, grasp, trial, seed, success, label, reason,
    close_forces (N, both pads), close_energies (J, both pads' strain energy at the close),
    hold_force (N), wall_s, newton_iterations, dhat (m). A trial
    that raises is the label "raised" with the exception as its reason."""
    name, setting, rule, grasp, trial, seed = job
    physical = _CUBE["physical"]
    backend = ScaledDhat(setting["dhat_scale"])
    row = dict(setting=name, rule=rule, grasp=grasp, trial=trial, seed=seed)
    started = time.perf_counter()
    try:
        result = simulate_grasp(_CUBE["object"], physical.object_poses[grasp], physical.grasp_poses[grasp],
                                SimParams(**setting["params"], close_rule=rule), seed, record=("trajectory",),
                                backend=backend)
    except Exception as exc:  # noqa: BLE001 - one trial's failure must not end the run
        return {**row, "success": False, "label": "raised", "reason": f"{type(exc).__name__}: {exc}".strip(),
                "close_forces": [float("nan")] * 2, "close_energies": [float("nan")] * 2, "hold_force": float("nan"),
                "wall_s": time.perf_counter() - started, "newton_iterations": 0, "dhat": backend.dhat}
    return {**row, "success": bool(result.success), "label": result.failure_mode or "held", "reason": result.reason,
            "close_forces": [float(f) for f in result.close_forces],
            "close_energies": [float(e) for e in result.psi], "hold_force": hold_force(result.trajectory),
            "wall_s": time.perf_counter() - started, "newton_iterations": int(result.newton_iterations),
            "dhat": backend.dhat}


def trial_key(row: dict) -> tuple:
    """(rule, grasp, trial) of a row: the same trial in another setting or run."""
    return row["rule"], row["grasp"], row["trial"]


def run_setting(pool, name: str, setting: dict, rules, grasps, n_trials: int) -> list[dict]:
    """Every (rule, grasp, trial) of one setting on the pool, with progress lines and an ETA."""
    jobs = [(name, setting, rule, g, k, seed) for g in grasps
            for k, seed in enumerate(trial_seeds(setting["root_seed"], g, n_trials)) for rule in rules]
    every = max(1, len(jobs) // PROGRESS_LINES)
    started, rows = time.perf_counter(), []
    for done, future in enumerate(as_completed([pool.submit(run_trial, job) for job in jobs]), 1):
        row = future.result()
        rows.append(row)
        if row["label"] == "raised":
            print(f"  {name}: rule {row['rule']} grasp {row['grasp']} trial {row['trial']} raised: {row['reason']}")
        if done % every == 0 or done == len(jobs):
            elapsed = time.perf_counter() - started
            eta = elapsed / done * (len(jobs) - done)
            print(f"  {name}: {done}/{len(jobs)} trials, {elapsed:.0f} s, ETA {eta:.0f} s", flush=True)
    return sorted(rows, key=trial_key)


def stored_rows(path: str, name: str, setting: dict, wanted: set) -> tuple[list[dict], dict]:
    """The rows of setting `name` in an earlier --out file and its run record; SystemExit unless
    it was run at the same setting and holds every (rule, grasp, trial) in `wanted`."""
    with open(path) as f:
        stored = json.load(f)
    run = stored["runs"].get(name)
    if run is None or run["setting"] != json.loads(json.dumps(setting)):
        raise SystemExit(f"{path} has no {name} run at this setting: run it here (leave out --from)")
    rows = [r for r in stored["rows"] if r["setting"] == name and trial_key(r) in wanted]
    if len(rows) != len(wanted):
        raise SystemExit(f"{path} lacks {len(wanted) - len(rows)} of the {name} trials asked for: run them here")
    return rows, run


def quantiles(values, *qs) -> list[float]:
    """The `qs` percentiles of `values` (NaN for none)."""
    return [float(np.percentile(values, q)) if len(values) else float("nan") for q in qs]


def agreement(rows: list[dict], reference: list[dict]) -> dict:
    """One rule's trials against the reference's same trials: n, the changed labels (grasp, trial,
    label, reference label, both reasons), the closing-force error of the trials closed in both
    (per trial the larger pad's, N and relative: median, p95, max), the hold-force difference of
    the trials held in both (N: median, max)."""
    ref = {(r["grasp"], r["trial"]): r for r in reference}
    pairs = [(r, ref[r["grasp"], r["trial"]]) for r in rows if (r["grasp"], r["trial"]) in ref]
    changed = [(r["grasp"], r["trial"], r["label"], s["label"], r["reason"], s["reason"])
               for r, s in pairs if r["label"] != s["label"]]
    force, relative, hold = [], [], []
    for r, s in pairs:
        f, f_ref = np.array(r["close_forces"], float), np.array(s["close_forces"], float)
        if np.all(np.isfinite(f)) and np.all(np.isfinite(f_ref)):
            force.append(np.max(np.abs(f - f_ref)))
            relative.append(np.max(np.abs(f - f_ref) / f_ref))
        if r["label"] == s["label"] == "held":  # a slip's hold phase may follow an object that left the pads
            hold.append(abs(r["hold_force"] - s["hold_force"]))
    return {"n": len(pairs), "changed": changed, "closed": len(force), "force": quantiles(force, 50, 95, 100),
            "relative": quantiles(relative, 50, 95, 100), "held": len(hold), "hold": quantiles(hold, 50, 100)}


def median_of(rows: list[dict], key: str) -> float:
    """Median of the rows' `key` (NaN for no rows)."""
    return statistics.median(r[key] for r in rows) if rows else float("nan")


def print_agreement(results: dict, rules) -> None:
    """Settings against reference per rule: trials, changed labels, closing-force error,
    hold-force difference; then every changed label with both reasons, and the dhat ratio."""
    stats = {rule: agreement(*([r for r in results[name] if r["rule"] == rule] for name in (SETTINGS, REFERENCE)))
             for rule in rules}
    lines = [("trials compared", lambda a: f"{a['n']}"),
             ("labels changed", lambda a: f"{len(a['changed'])}"),
             ("closing force error med/p95/max [N]", lambda a: "/".join(f"{v:.2f}" for v in a["force"])),
             ("  relative med/p95/max [%]", lambda a: "/".join(f"{100 * v:.1f}" for v in a["relative"])),
             ("  trials closed in both", lambda a: f"{a['closed']}"),
             ("hold force difference med/max [N]", lambda a: "/".join(f"{v:.2f}" for v in a["hold"])),
             ("  trials held in both", lambda a: f"{a['held']}")]
    print(f"{'settings vs reference':<38}" + "".join(f"{rule:>20}" for rule in rules))
    for title, cell in lines:
        print(f"{title:<38}" + "".join(f"{cell(stats[rule]):>20}" for rule in rules))
    for rule in rules:
        for g, k, label, ref_label, reason, ref_reason in stats[rule]["changed"]:
            print(f"rule {rule}: grasp {g} trial {k}: {label} -> reference {ref_label}  ({reason} | {ref_reason})")
    dhat = {trial_key(r): r["dhat"] for r in results[SETTINGS]}
    ratios = [r["dhat"] / dhat[trial_key(r)] for r in results[REFERENCE] if trial_key(r) in dhat]
    print(f"reference dhat / settings dhat per trial: {min(ratios, default=np.nan):.6g} to "
          f"{max(ratios, default=np.nan):.6g}")


def print_setting(name: str, rows: list[dict], rules) -> None:
    """Per rule, one setting's labels, median wall time (s) and Newton iterations per trial, and
    the range of its dhat (m)."""
    for rule in rules:
        ruled = [r for r in rows if r["rule"] == rule]
        labels = dict(sorted(collections.Counter(r["label"] for r in ruled).items()))
        low, high = quantiles([r["dhat"] for r in ruled], 0, 100)
        print(f"{name}, rule {rule}: median {median_of(ruled, 'wall_s'):.2f} s, "
              f"{median_of(ruled, 'newton_iterations'):.0f} Newton iterations per trial; dhat {low * 1e6:.3f} to "
              f"{high * 1e6:.3f} um; labels {labels}")


def compare(path: str, results: dict, setting: dict) -> None:
    """Every study-setting trial whose label differs from the earlier run in `path`, and whether it
    moved toward the reference (this run's), away from it, or neither; a note when the earlier
    run's study setting is not `setting`."""
    with open(path) as f:
        before = json.load(f)
    if SETTINGS not in before["runs"]:
        raise SystemExit(f"{path} has no run of the study's setting to compare with")
    if before["runs"][SETTINGS]["setting"] != json.loads(json.dumps(setting)):
        print(f"note: {path} ran another study setting (parameters, dhat scale or root seed) than this run")
    old = {trial_key(r): r for r in before["rows"] if r["setting"] == SETTINGS}
    ref = {trial_key(r): r for r in results.get(REFERENCE, [])}
    moves = collections.Counter()
    for r in results[SETTINGS]:
        key = trial_key(r)
        if key not in old or old[key]["label"] == r["label"]:
            continue
        ref_label = ref[key]["label"] if key in ref else None
        move = ("toward" if r["label"] == ref_label else "away" if old[key]["label"] == ref_label
                else "neither") if ref_label else "no reference"
        moves[move] += 1
        print(f"changed: rule {key[0]} grasp {key[1]} trial {key[2]}: {old[key]['label']} -> {r['label']} "
              f"(reference {ref_label}): {move}  ({r['reason']})")
    print(f"{sum(moves.values())} study-setting labels changed against {path} "
          f"(measured at {before['runs'][SETTINGS]['commit']}): {dict(moves)}")


def main():
    with open(CONFIG) as f:
        config = yaml.safe_load(f)
    calibration = config["calibration"]
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=int, default=config["trials"], help="perturbed trials per grasp")
    parser.add_argument("--grasps", type=int, nargs="+", default=None, help="cube grasp indices (default all)")
    parser.add_argument("--rules", default="force,psi", help="close rules, comma-separated")
    parser.add_argument("--E", type=float, default=calibration["E_ref"], help="pad Young's modulus (Pa)")
    parser.add_argument("--mu", type=float, default=calibration["sensitivity_mu"], help="pad-object friction")
    parser.add_argument("--workers", type=int, default=2, help="processes running trials")
    only = parser.add_mutually_exclusive_group()
    only.add_argument("--settings-only", action="store_true", help="run the study's setting only")
    only.add_argument("--reference-only", action="store_true", help="run the reference only")
    parser.add_argument("--from", dest="from_file", metavar="FILE.json",
                        help="with --settings-only or --reference-only: the other setting from an earlier --out")
    parser.add_argument("--out", metavar="FILE.json", help="write the settings and every trial's row here")
    parser.add_argument("--compare", metavar="BEFORE.json",
                        help="an earlier --out: list the study-setting labels that changed")
    args = parser.parse_args()
    if args.from_file and not (args.settings_only or args.reference_only):
        parser.error("--from needs --settings-only or --reference-only: the setting to run here")
    warnings.simplefilter("ignore", PoseRoundingWarning)
    data_dir = str(resolve_data_dir(config["data_dir"] or None))
    rules = args.rules.split(",")
    grasps = args.grasps if args.grasps is not None else list(range(load_physical_grasps(data_dir, OBJECT).n_grasps))
    settings = {SETTINGS: study_setting(config, args.E, args.mu)}
    settings[REFERENCE] = reference_setting(settings[SETTINGS])
    to_run = [SETTINGS] * (not args.reference_only) + [REFERENCE] * (not args.settings_only)
    commit = git_commit()
    load = os.getloadavg()
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, load average {load[0]:.2f}; commit {commit}; "
          f"E={args.E:g} Pa, mu={args.mu}, jaw {calibration['jaw']}, rules {args.rules}, {len(grasps)} grasps x "
          f"{args.trials} trials, root seed {config['seed']}, {args.workers} workers")
    for name, setting in settings.items():
        p = setting["params"]
        print(f"{name}: dt {p['dt']:g} s, newton_tolerance {p['newton_tolerance']:g} m/s, "
              f"dhat {setting['dhat_scale']:g} x {p['dhat'] or '1e-3 x scene diagonal'}, "
              f"newton_budget {p['newton_budget']}")
    results, runs = {}, {}
    with ProcessPoolExecutor(args.workers, initializer=load_cube, initargs=(data_dir,)) as pool:
        for name in to_run:
            started = time.perf_counter()
            results[name] = run_setting(pool, name, settings[name], rules, grasps, args.trials)
            runs[name] = {"setting": settings[name], "commit": commit, "wall_s": time.perf_counter() - started,
                          "workers": args.workers}
            print(f"{name}: {len(results[name])} trials in {runs[name]['wall_s']:.0f} s", flush=True)
    if args.from_file:
        name = REFERENCE if args.settings_only else SETTINGS
        wanted = {(rule, g, k) for rule in rules for g in grasps for k in range(args.trials)}
        results[name], runs[name] = stored_rows(args.from_file, name, settings[name], wanted)
        print(f"{name}: {len(results[name])} trials from {args.from_file}, measured at commit "
              f"{runs[name]['commit']} (valid only if neither the engine nor the grasp procedure changed since)")
    for name, rows in results.items():
        print_setting(name, rows, rules)
    if len(results) == 2:
        print_agreement(results, rules)
    if args.out:
        tmp = args.out + ".tmp"
        with open(tmp, "w") as f:
            json.dump({"runs": runs, "rows": [row for rows in results.values() for row in rows]}, f, indent=1)
        os.replace(tmp, args.out)
    if args.compare and SETTINGS in results:
        compare(args.compare, results, settings[SETTINGS])


if __name__ == "__main__":
    main()
