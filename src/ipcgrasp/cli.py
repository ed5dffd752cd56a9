"""`ipcgrasp` command line."""

from __future__ import annotations

import argparse
import contextlib
import math
import sys
import time
from pathlib import Path

INTERRUPTED = 130
"""Exit status after Ctrl-C (128 + SIGINT, as the shell reports a process SIGINT ended)."""


def _cmd_data_where(args) -> int:
    from ipcgrasp.data.location import resolve_data_dir

    print(resolve_data_dir(args.data))
    return 0


def _cmd_data_fetch(args) -> int:
    from rich.progress import DownloadColumn, Progress, TransferSpeedColumn

    from ipcgrasp.data.fetch import ARCHIVE_URL, fetch_reach

    with Progress(*Progress.get_default_columns(), DownloadColumn(), TransferSpeedColumn()) as bar:
        task = bar.add_task("data.zip", total=None)
        dest = fetch_reach(Path(args.dest), progress=lambda done, total: bar.update(task, completed=done, total=total))
    print(f"unpacked the REACH layout from {ARCHIVE_URL} into {dest}")
    return 0


def _cmd_data_import(args) -> int:
    from ipcgrasp.data.own import import_trials, study_command
    from ipcgrasp.paths import REPO_ROOT

    manifest = import_trials(args.source, args.dest, repair=args.repair)
    for name, info in manifest["objects"].items():
        if info["mesh_repair"] is not None:
            print(f"--repair: {info['mesh_source']}: {info['mesh_repair']['summary']}", file=sys.stderr, flush=True)
        print(f"{name}: {info['grasps']} grasp(s) x {info['trials_per_grasp']} trial(s), {info['mass_kg'] * 1000:g} g, "
              f"{info['split']}")
    print(f"imported {args.source} ({manifest['gripper']}) into {args.dest} (REACH layout). The study on it, from the "
          f"repository root:\n  {study_command(manifest, Path(args.dest), REPO_ROOT)}")
    return 0


def _cmd_objects(args) -> int:
    from ipcgrasp.data.location import DataNotFoundError, describe_data_dir, resolve_data_dir
    from ipcgrasp.data.registry import load_registry

    registry = load_registry(args.registry)
    try:
        data_dir = resolve_data_dir(args.data)
        local = describe_data_dir(data_dir, registry)["objects"]
        where = f"local data: {data_dir}"
    except DataNotFoundError as exc:
        if args.data:
            raise
        local, where = {}, f"local data: none ({' '.join(str(exc).split())[:120]}...)"
    print(f"{'object':<16} {'mass [g]':>8}  {'split':<8}  local data")
    for info in registry.values():
        entry = local.get(info.name, {})
        data = ("mesh + physical grasps" if entry.get("mesh") and entry.get("physical_grasps")
                else "mesh only" if entry.get("mesh") else "grasps only" if entry.get("physical_grasps") else "-")
        print(f"{info.name:<16} {info.mass * 1000:>8.1f}  {info.split:<8}  {data}")
    print(where)
    return 0


def _cmd_grippers(args) -> int:
    from ipcgrasp.grasp.description import shipped_grippers

    for description in shipped_grippers().values():
        print(description.summary())
    return 0


WORKERS_DEFAULT = "the cores this process may use"
"""--workers' default in the help (`workers.usable_cores`), the same for simulate and generate."""


def _gripper(args):
    """The Gripper of --gripper (a shipped name or a description file) with the pad of --jaw (None:
    the description's default pad)."""
    from ipcgrasp.grasp.gripper import Gripper

    return Gripper.from_description(args.gripper, args.jaw)


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return value


def _positive_float(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {text}")
    return value


def _output(*suffixes: str, directory: bool = False):
    """An argparse type: an output path checked before any work (`io.check_output_path`)."""
    def output_path(text: str) -> Path:
        from ipcgrasp.io import check_output_path

        try:
            return check_output_path(text, suffixes, directory)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    return output_path


RENDER_SUFFIXES = (".gif", ".png")
"""What `_render` writes: an animated GIF (plus stills), or a .png of the first and final frame."""


def _check_outputs(args, outputs, inputs=()) -> None:
    """Before any work: the command's outputs ((path or None, what names it)) against its inputs,
    each other and existing files (`io.check_outputs`; --overwrite lets existing files go)."""
    from ipcgrasp.io import check_outputs

    check_outputs([(path, what) for path, what in outputs if path is not None],
                  [path for path in inputs if path is not None], args.overwrite)


def _render_outputs(out, option: str) -> list:
    """(path, what) of each file `_render` writes for `option` (e.g. --render) naming `out`."""
    if out is None or out.suffix.lower() == ".png":
        return [(out, option)]
    from ipcgrasp.viz.render import still_paths

    first, final = still_paths(out)
    return [(out, option), (first, f"the first still of {option}"), (final, f"the final still of {option}")]


def _trial_inputs(args) -> list:
    """The files a trial command reads: a --gripper file and the object's mesh and physical grasps
    in the data directory (when it is found; the command reports it otherwise)."""
    from ipcgrasp.data.location import DataNotFoundError, resolve_data_dir
    from ipcgrasp.data.reach import GRASP_DIR, MESH_DIR

    gripper = getattr(args, "gripper", None)  # replay takes the cube's
    files = [Path(gripper)] if gripper and Path(gripper).is_file() else []
    if getattr(args, "mesh", None):
        return files + [Path(args.mesh)] + ([Path(args.pose)] if args.pose else [])
    try:
        data_dir = Path(resolve_data_dir(args.data))
    except DataNotFoundError:
        return files
    return files + [data_dir / MESH_DIR / f"{args.object}.obj", data_dir / GRASP_DIR / f"{args.object}.json"]


def _trajectory_dir_path(args, trial: int) -> Path:
    """Where --trajectory-dir puts trial `trial`'s trajectory."""
    return Path(args.trajectory_dir) / f"{args.object}_grasp{args.grasp}_trial{trial}.nc"


def _physical_grasp(args):
    """(object, physical grasps) of args.object with args.grasp checked; an unknown object or a
    grasp index out of range raises FileNotFoundError / ValueError (exit code 2). With
    args.mesh_grasp (`_mesh_options`): that object and its one grasp (`grasp.mesh_grasp`)."""
    from ipcgrasp import GraspObject
    from ipcgrasp.data.location import resolve_data_dir
    from ipcgrasp.data.reach import load_object, load_physical_grasps

    if getattr(args, "mesh_grasp", None) is not None:
        from ipcgrasp.grasp.mesh_grasp import mesh_grasp

        options = args.mesh_grasp
        obj = _object(options.mesh, options.mass, options.name, bool(getattr(args, "repair", None)))
        return obj, mesh_grasp(obj, options)
    data_dir = resolve_data_dir(args.data)
    mesh, mass = load_object(data_dir, args.object)
    physical = load_physical_grasps(data_dir, args.object)
    if not 0 <= args.grasp < physical.n_grasps:
        raise ValueError(f"grasp index {args.grasp} out of range: {args.object} has {physical.n_grasps} "
                         f"physical grasps, valid indices 0..{physical.n_grasps - 1}")
    _warn_other_gripper(args, data_dir)
    return GraspObject.from_file(mesh, mass, name=args.object), physical


def _warn_other_gripper(args, data_dir) -> None:
    """Warn when --gripper is not the gripper that recorded the physical grasps; args.other_gripper
    is that warning then (for the R line), else None. A command without --gripper (replay, whose
    gripper is the study cube's, checked by the study) is not warned."""
    import warnings

    from ipcgrasp.data.recorded import other_gripper_warning
    from ipcgrasp.grasp.description import load_description

    if getattr(args, "gripper", None) is None:
        args.other_gripper = None
        return
    warning = other_gripper_warning(data_dir, args.object, load_description(args.gripper).name)
    args.other_gripper = warning
    if warning:
        warnings.warn(warning, stacklevel=2)


def _noise(args) -> dict:
    return {"noise_translation": 0.0, "noise_rotation": 0.0} if args.no_noise else {}


def _grasp_setup(args):
    """(object, physical grasps, trial parameters, gripper) from the arguments (see
    `_physical_grasp`, `_gripper`)."""
    from ipcgrasp import SimParams

    gripper = _gripper(args)
    obj, physical = _physical_grasp(args)
    params = SimParams(E=args.E, mu=args.mu, close_rule=args.close_rule, psi_th=args.psi_th, jaw=gripper.pad_kind,
                       finger_stiffness=args.finger_stiffness, critical_mass=args.critical_mass, **_noise(args))
    return obj, physical, params, gripper


def _start_up(args):
    """Around a command's start-up (its imports and set-up, before its work): the garbage
    collector paused, and on leaving, when the command owns its process (args.owns_process,
    `main` with argv None), everything then alive frozen before it resumes. Start-up creates
    about 100,000 objects that live to the end of the process (modules, numba's, trimesh's and
    scipy's types and functions) and frees almost nothing in cycles: the collector's passes over
    them, three full ones among them, cost a first cube trial about 0.15 s (0.17-0.21 s of
    collection in all against 0.01 s), and frozen they are left out of its later passes. A
    caller passing argv (the tests) gets the pause without the freeze."""
    from ipcgrasp.collector import collector_paused

    return collector_paused(freeze=getattr(args, "owns_process", False))


def _trial_progress():
    from ipcgrasp.progress import trial_progress

    return trial_progress()


def _outcome(result) -> str:
    return "success" if result.success else str(result.failure_mode)


def _run_trials(obj, physical, grasp: int, params, n_trials: int, seed: int, workers: int,
                record_first=(), record_all=(), gripper=None) -> list:
    """The trials `robustness` runs (same per-trial seeds) under progress bars. Sequential: one
    bar per trial showing its simulated time; parallel: one bar over the trials. Every trial
    records `record_all`, the first also `record_first` (`simulate_grasp`'s record; after a
    parallel run the first trial is run again, recording, with the same seed)."""
    from ipcgrasp import robustness
    from ipcgrasp.grasp.simulate import run_trial, trial_seeds

    object_pose, grasp_pose = physical.object_poses[grasp], physical.grasp_poses[grasp]
    seeds = trial_seeds(seed, grasp, n_trials)

    record_first = {*record_first, *record_all} if record_first else ()

    def run_one(bar, k, record):
        task = bar.add_task(f"trial {k + 1}/{n_trials}", total=None, status="")
        result = run_trial(obj, object_pose, grasp_pose, params, seeds[k], record=record, gripper=gripper,
                           progress=lambda t: bar.update(task, status=f"{t:.2f} s simulated"))
        bar.update(task, total=1, completed=1, status=_outcome(result))
        return result

    with _trial_progress() as bar:
        if workers <= 1:
            return [run_one(bar, k, record_first if record_first and k == 0 else record_all) for k in range(n_trials)]
        task = bar.add_task(f"{n_trials} trials, {workers} processes", total=n_trials, status="")
        rob = robustness(obj, object_pose, grasp_pose, params, n_trials=n_trials, seed=seed, workers=workers,
                         on_trial=lambda result: bar.update(task, advance=1, status=_outcome(result)),
                         grasp_index=grasp, record=record_all, gripper=gripper)
        trials = list(rob.trials)
        if record_first:
            trials[0] = run_one(bar, 0, record_first)
        return trials


def _json_ready(value):
    """Standard JSON values: numpy scalars to Python numbers, non-finite floats to null."""
    if isinstance(value, dict):
        return {k: _json_ready(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_ready(v) for v in value]
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _critical_mass_text(mass: float, max_mass: float) -> str:
    """A trial's critical mass (kg) for the table: inf means no slip up to the cap, NaN that the
    ramp did not run (the hold failed) or the solver failed."""
    if math.isnan(mass):
        return "-"
    return f"> {max_mass:g}" if math.isinf(mass) else f"{mass:.3f}"


def _report(args, trials, physical, params) -> float:
    """Print the table of trials and R next to the physical robustness; return R."""
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    table = Table(title=f"{args.object}, grasp {args.grasp}: {len(trials)} trial(s), E = {params.E:g} Pa, "
                        f"mu = {params.mu:g}, close rule {params.close_rule}")
    columns = ["trial", "success", "failure mode", "reason", "closing forces [N]", "close time [s]"]
    if params.critical_mass:
        columns.append("critical mass [kg]")
    for column in columns + ["wall time [s]"]:
        table.add_column(escape(column), justify="left" if column in ("failure mode", "reason") else "right")
    for k, r in enumerate(trials):
        forces = " / ".join(f"{f:.1f}" for f in r.close_forces) if all(map(math.isfinite, r.close_forces)) else "-"
        close_time = f"{r.close_time:.2f}" if math.isfinite(r.close_time) else "-"
        row = [str(k + 1), "yes" if r.success else "no", r.failure_mode or "-", escape(r.reason), forces, close_time]
        if params.critical_mass:
            row.append(_critical_mass_text(r.critical_mass, params.max_mass))
        table.add_row(*row, f"{r.wall_time:.1f}")
    simulated = sum(r.success for r in trials) / len(trials)
    console = Console(width=None if sys.stdout.isatty() else 120)  # a pipe or file gets the whole table
    console.print(table)
    physical_robustness = physical.robustness[args.grasp]
    other = getattr(args, "other_gripper", None)
    recorded = (f" with the {other.recorded}, which recorded the grasp; not comparable with the {other.simulated}"
                if other else "")
    console.print(f"R = {simulated:.2f}" + (f" (physical robustness {physical_robustness:.2f}{recorded})"
                                            if math.isfinite(physical_robustness) else ""), highlight=False)
    return simulated


def _render(args, result, out) -> None:
    from ipcgrasp.viz.render import render_stills, render_trial

    caption = f"{args.object} grasp {args.grasp}"
    view = {key: getattr(args, key) for key in ("azimuth", "elevation", "size") if hasattr(args, key)}
    if out.suffix.lower() == ".png":
        render_stills(result, out, caption=caption, **view)
        print(f"wrote {out} (first frame and final frame)")
    else:
        paths = render_trial(result, out, fps=args.fps, every=args.every, caption=caption, **view)
        print(f"wrote {paths['gif']} ({paths['frames']} frames), {paths['first']}, {paths['final']}")


BYTECODE_PACKAGES = ("ipcgrasp", "rich")
"""Packages whose every module `compile` writes the bytecode cache of, besides the modules the
warm-up imports: each command's own modules, and rich, which prints every command's output."""


def _cmd_compile(args) -> int:
    from ipcgrasp.bytecode import write_bytecode, write_package_bytecode
    from ipcgrasp.grasp.warmup import default_jobs, warm_up

    jobs = args.jobs or default_jobs()
    print("ipcgrasp compile: one trial of a synthetic box per contact model fills numba's cache "
          "(about 50 s of CPU on a fresh install, seconds once cached)")
    started = time.perf_counter()
    with _compile_progress() as log:
        warm_up(log=log, jobs=jobs)
    written = write_bytecode() + write_package_bytecode(BYTECODE_PACKAGES)
    if written:
        print(f"ipcgrasp compile: wrote the bytecode caches of {written} Python modules")
    print(f"ipcgrasp compile: done in {time.perf_counter() - started:.0f} s")
    return 0


COMPILE_POLL = 0.5
"""Seconds between two looks at which listed kernels the warm-up holds (`ipcgrasp compile`'s bar)."""


@contextlib.contextmanager
def _compile_progress():
    """`ipcgrasp compile`'s progress bar: the listed kernels (grasp.warmup.KERNELS) the warm-up
    holds, weighted by their recorded compile times, looked at every COMPILE_POLL s from a
    thread, with the time left from that share; yields the warm-up's log, printed above the bar.
    Without a readable list the bar only spins (the warm-up says why)."""
    import threading

    from ipcgrasp.documents import load_json
    from ipcgrasp.grasp.warmup import KERNELS, ready_kernels

    try:
        kernels = load_json(KERNELS)
    except (OSError, ValueError):
        kernels = None
    total = sum(entry[3] for entry in kernels) if kernels else None
    done = threading.Event()
    with _trial_progress() as bar:
        task = bar.add_task("compiling kernels", total=total, status="")

        def show():
            count, seconds = ready_kernels(kernels)
            bar.update(task, completed=seconds, status=f"{count} of {len(kernels)} kernels")

        def look():
            while kernels:
                show()
                if done.wait(COMPILE_POLL):
                    return

        watcher = threading.Thread(target=look, daemon=True)
        watcher.start()
        try:
            yield lambda line: bar.console.print(line, markup=False, highlight=False, soft_wrap=True)
        finally:
            done.set()
            watcher.join()
            if kernels:
                show()


MESH_OPTIONS = ("--mass", "--name", "--pose", "--grasp-pose", "--object-pose", "--repair")
"""simulate's options that go only with --mesh."""


def _mesh_options(args) -> None:
    """Before any work: args.mesh_grasp, simulate --mesh's checked options (`grasp.mesh_grasp`),
    with args.object and args.grasp set to the object's name and grasp 0 for the table, the file
    names and the trajectory's attributes; None on the REACH path, which needs --object and --grasp."""
    if args.mesh is None:
        given = [option for option in MESH_OPTIONS if getattr(args, option[2:].replace("-", "_")) is not None]
        if given:
            raise ValueError(f"{given[0]} goes only with --mesh; fix: add --mesh FILE, or leave {given[0]} out")
        missing = [option for option in ("--object", "--grasp") if getattr(args, option[2:]) is None]
        if missing:
            raise ValueError(f"{' and '.join(missing)} required (a REACH object and grasp); fix: add them, or give "
                             "your own object with --mesh FILE --mass KG --pose FILE.json")
        args.mesh_grasp = None
        return
    from ipcgrasp.grasp.mesh_grasp import mesh_options

    args.mesh_grasp = mesh_options(args)
    args.object, args.grasp = args.mesh_grasp.name, 0


def _cmd_simulate(args) -> int:
    with _start_up(args):
        from ipcgrasp.io import write_json_atomic

        _mesh_options(args)
        per_trial = [(_trajectory_dir_path(args, k), "--trajectory-dir") for k in range(args.trials)] \
            if args.trajectory_dir else []
        _check_outputs(args, [(args.json, "--json"), *_render_outputs(args.render, "--render"),
                              (args.trajectory, "--trajectory"), *per_trial], _trial_inputs(args))
        obj, physical, params, gripper = _grasp_setup(args)
        args.workers = min(_workers(args), args.trials)
    first = ("frames",) * (args.render is not None or args.vertices) + ("trajectory",) * (args.trajectory is not None)
    trials = _run_trials(obj, physical, args.grasp, params, args.trials, args.seed, args.workers,
                         record_first=first, record_all=("trajectory",) if args.trajectory_dir else (),
                         gripper=gripper)
    simulated = _report(args, trials, physical, params)
    if args.json:
        write_json_atomic(args.json, _json_ready({
            "object": args.object, "grasp": args.grasp, "seed": args.seed, "gripper": gripper.name,
            "params": params.to_dict(),
            "robustness": simulated, "physical_robustness": float(physical.robustness[args.grasp]),
            **(args.mesh_grasp.summary() if args.mesh_grasp else {}),
            "trials": [r.summary() for r in trials]}))
        print(f"wrote {args.json}")
    if args.render:
        _render(args, trials[0], args.render)
    if args.trajectory:
        _write_trajectory(args, trials[0], 0, params, args.trajectory)
    if args.trajectory_dir:
        for k, trial in enumerate(trials):
            _write_trajectory(args, trial, k, params, _trajectory_dir_path(args, k))
    return 0


def _write_trajectory(args, result, trial: int, params, path, **attrs) -> None:
    from ipcgrasp.grasp.trajectory import write_trajectory

    if not result.trajectory:
        print(f"trial {trial} has no trajectory ({result.failure_mode}: {result.reason}); nothing written to {path}")
        return
    write_trajectory(result, path, params, vertices=getattr(args, "vertices", False) and bool(result.frames),
                     object=args.object, grasp=args.grasp, trial=trial, root_seed=args.seed, **attrs)
    print(f"wrote {path}")


def _cmd_plot(args) -> int:
    from ipcgrasp.grasp.trajectory import read_trajectory
    from ipcgrasp.viz.trajectory_plot import plot_trajectory

    out = args.out or Path(args.trajectory).with_suffix(".png")
    _check_outputs(args, [(out, "--out" if args.out else "the picture (TRAJECTORY.png; --out names another)")],
                   [args.trajectory])
    plot_trajectory(read_trajectory(args.trajectory), out)
    print(f"wrote {out}")
    return 0


def _cmd_frames(args) -> int:
    from ipcgrasp.grasp.frame_export import frame_files, write_frames
    from ipcgrasp.grasp.trajectory import read_trajectory

    ds = read_trajectory(args.trajectory)
    _check_outputs(args, [(path, "--out") for path in frame_files(ds, args.out, args.format, args.every)],
                   [args.trajectory])
    paths = write_frames(ds, args.out, args.format, args.every)
    print(f"wrote {len(paths) - 1} {args.format.upper()} files and {paths[-1].name} to {args.out}")
    return 0


def _cmd_view(args) -> int:
    import time

    from ipcgrasp.grasp.trajectory import read_trajectory
    from ipcgrasp.viz.viewer import serve_trajectory

    _check_listen_address(args.host, args.port)
    server = serve_trajectory(read_trajectory(args.trajectory), args.host, args.port)
    print(f"serving {args.trajectory} at http://{args.host}:{server.get_port()} (Ctrl-C to stop)")
    try:
        while True:
            time.sleep(1.0)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


def _cmd_replay(args) -> int:
    from ipcgrasp.documents import load_yaml
    from ipcgrasp.grasp.gripper import Gripper
    from ipcgrasp.grasp.simulate import run_trial
    from ipcgrasp.study.replay import read_simulation_cube, stored_trial
    from ipcgrasp.viz.figures.caption import STAGE_SPLITS

    _check_outputs(args, [*_render_outputs(args.render, "--render"), (args.trajectory, "--trajectory")],
                   [args.cube, args.config, *_trial_inputs(args)])
    fixed = None
    if args.config:
        study = load_yaml(args.config)
        if not isinstance(study, dict) or not isinstance(study.get("sim"), dict):
            raise ValueError(f"--config {args.config}: no `sim:` mapping; fix: give the study's config file, e.g. "
                             "config/config.yaml")
        fixed = study["sim"]
    setting = {"E": args.E, "mu": args.mu, "rule": args.rule, "jaw": args.jaw,
               "finger_stiffness": args.finger_stiffness}
    cube = read_simulation_cube(args.cube)
    stored = stored_trial(cube, args.object, args.grasp, args.trial, setting, fixed)
    gripper = Gripper.from_description(cube.attrs.get("gripper"), stored.params.jaw, stored.params.pad_resolution)
    obj, physical = _physical_grasp(args)
    record = ("frames",) * (args.render is not None or args.vertices) + ("trajectory",) * (args.trajectory is not None)
    result = run_trial(obj, physical.object_poses[args.grasp], physical.grasp_poses[args.grasp], stored.params,
                       stored.seed, record=record, gripper=gripper)
    args.seed = stored.seed
    _report(args, [result], physical, stored.params)
    same = (result.success, result.failure_mode, result.reason) == (stored.success, stored.failure_mode,
                                                                     stored.reason) \
        and all(a == b or (math.isnan(a) and math.isnan(b)) for a, b in zip(result.close_forces, stored.close_forces))
    print(("replay matches the stored trial" if same else
           f"replay DIFFERS from the stored trial: stored {stored.failure_mode or 'success'} ({stored.reason}), "
           f"closing forces {stored.close_forces}") + f" (seed {stored.seed})")
    if args.render:
        _render(args, result, args.render)
    if args.trajectory:
        split = STAGE_SPLITS.get(cube.attrs.get("stage"))  # the study split the trial comes from
        _write_trajectory(args, result, args.trial, stored.params, args.trajectory,
                          **({"split": split} if split else {}))
    return 0 if same else 1


def _cmd_render(args) -> int:
    _check_outputs(args, _render_outputs(args.out, "--out"), _trial_inputs(args))
    obj, physical, params, gripper = _grasp_setup(args)
    trial = _run_trials(obj, physical, args.grasp, params, 1, args.seed, 1, record_first=("frames",),
                        gripper=gripper)[0]
    _report(args, [trial], physical, params)
    _render(args, trial, args.out)
    return 0


def _cmd_quality(args) -> int:
    import time

    import numpy as np
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from ipcgrasp import SimParams
    from ipcgrasp.baselines.image_quality import SUCCESS_THRESHOLD, grasp_quality
    from ipcgrasp.grasp.simulate import perturbed_grasp, trial_seeds

    _check_outputs(args, [(args.png, "--png")], _trial_inputs(args))
    gripper = _gripper(args)
    obj, physical = _physical_grasp(args)
    params = SimParams(**_noise(args))
    object_pose, grasp_pose = physical.object_poses[args.grasp], physical.grasp_poses[args.grasp]
    pad = {"w": gripper.pad_width, "r": gripper.max_opening}
    table = Table(title=f"{args.object}, grasp {args.grasp}, {gripper.name}: image-space quality (Tan et al.), "
                        f"{args.resolution * 1e3:g} mm pixels")
    for column in ("trial", "score", "lift", "D_m", "D_c", "D_t", "R_r [deg]", "S_a [deg]", "S_f [mm]",
                   "translation [mm]", "render [ms]", "measure [ms]"):
        table.add_column(escape(column), justify="right")
    grasp_quality(_silhouette(obj, grasp_pose, object_pose, args.resolution), **pad)  # compile/load
    scores = []
    for k, seed in enumerate(trial_seeds(args.seed, args.grasp, args.trials)):
        pose = perturbed_grasp(grasp_pose, params, seed)
        start = time.perf_counter()
        silhouette = _silhouette(obj, pose, object_pose, args.resolution)
        rendered = time.perf_counter()
        q = grasp_quality(silhouette, **pad)
        measured = time.perf_counter()
        scores.append(q.score)
        table.add_row(str(k + 1), f"{q.score:.3f}", "yes" if q.score >= SUCCESS_THRESHOLD else "no",
                      str(int(q.miss)), str(int(q.collision)), f"{q.d_t:.3f}", f"{np.degrees(q.r_r):.1f}",
                      f"{np.degrees(q.s_a):.1f}", f"{q.s_f * 1e3:.2f}", f"{q.translation * 1e3:.2f}",
                      f"{(rendered - start) * 1e3:.2f}", f"{(measured - rendered) * 1e3:.3f}")
        if k == 0 and args.png:
            from ipcgrasp.viz.figures.caption import ONE_TRIAL, OUTSIDE_STUDY, caption_line
            from ipcgrasp.viz.quality import plot_image_quality

            plot_image_quality(silhouette, q, args.png, caption=caption_line(
                f"{args.object} grasp {args.grasp}, trial 1" + (" (recorded pose)" if args.no_noise else ""),
                OUTSIDE_STUDY, ONE_TRIAL))
    console = Console(width=None if sys.stdout.isatty() else 160)
    console.print(table)
    predicted = np.mean(np.array(scores) >= SUCCESS_THRESHOLD)
    console.print(f"mean score {np.mean(scores):.3f}; predicted R = {predicted:.2f} (score >= {SUCCESS_THRESHOLD}; "
                  f"physical robustness {physical.robustness[args.grasp]:.2f})", highlight=False)
    if args.png:
        print(f"wrote {args.png}")
    return 0


def _silhouette(obj, grasp_pose, object_pose, resolution: float):
    """The object's silhouette along the approach at `resolution` (m); a raster too large for
    memory raises ValueError naming --resolution."""
    from ipcgrasp.baselines.image_quality import RasterSizeError, render_silhouette

    try:
        return render_silhouette(obj.mesh, grasp_pose, resolution, object_pose=object_pose)
    except RasterSizeError as exc:
        raise ValueError(f"--resolution {resolution:g}: {exc}") from None


def _argument(parse):
    """An argparse type from a parser that raises ValueError: argparse prints the parser's
    message (it would print only "invalid value" for a ValueError)."""

    def checked(text: str):
        try:
            return parse(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    checked.__name__ = parse.__name__
    return checked


def _port(text: str) -> int:
    value = int(text)
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"must be a port number from 0 to 65535 (0: any free one), got {text}")
    return value


def _check_listen_address(host: str, port: int) -> None:
    """ValueError naming --host or --port, before any work, when the viewer could not listen on
    host:port (an unknown host, an address not of this machine, a port in use or not allowed):
    the viewer's server would otherwise fail in its own thread and leave the command waiting."""
    import socket

    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                                              flags=socket.AI_PASSIVE)[0]
    except socket.gaierror as exc:
        raise ValueError(f"--host {host}: not a known address ({exc.strerror}); fix: --host 127.0.0.1 (this "
                         "machine only, the default) or 0.0.0.0 (every interface)") from None
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as exc:
            raise ValueError(f"--host {host} --port {port}: cannot listen there ({exc.strerror}); fix: another "
                             "--port (0: any free one), or --host 127.0.0.1") from None


def _non_negative_int(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be a non-negative integer, got {text}")
    return value


def _generate_with_snakemake(args) -> int:
    """`generate` as Snakemake jobs (workflow/generate.smk, one per --shard-size grasps): the
    settings go to OUT/generate.yaml, which every job reads; snakemake runs from the repository
    root, on --profile's executor or locally on --workers cores, and reruns the shards an
    interrupted run left incomplete (the same command resumes)."""
    import yaml

    from ipcgrasp.dataset.records import GENERATE_CONFIG, check_resume
    from ipcgrasp.dataset.run_lock import release_stale_locks, run_snakemake
    from ipcgrasp.dataset.shards import generation_inputs
    from ipcgrasp.io import write_bytes_atomic
    from ipcgrasp.paths import REPO_ROOT

    out = Path(args.out).resolve()
    config = {"mesh": str(Path(args.mesh).resolve()), "mass": args.mass, "n": args.n, "out": str(out),
              "name": args.name or "", "trials": args.trials, "seed": args.seed, "shard_size": args.shard_size,
              "images": not args.no_images, "E": args.E, "mu": args.mu, "close_rule": args.close_rule,
              "gripper": str(Path(args.gripper).resolve()) if Path(args.gripper).is_file() else args.gripper,
              "jaw": args.jaw, "critical_mass": args.critical_mass, "repair": args.repair}
    obj, params, gripper = generation_inputs(config)  # a bad mesh, mass or setting stops here, before any job
    check_resume(out, obj, params, gripper, args.trials, args.seed)  # as do records made with other settings
    for lock in release_stale_locks(out, REPO_ROOT):
        print(f"removed {lock}, left by a generate run into {out} that was killed", flush=True)
    config_file = write_bytes_atomic(out / GENERATE_CONFIG, yaml.safe_dump(config, sort_keys=False).encode())
    command = [sys.executable, "-m", "snakemake", "-s", str(REPO_ROOT / "workflow" / "generate.smk"),
               "--configfile", str(config_file), "--rerun-incomplete"]
    profile = str(Path(args.profile).resolve()) if args.profile and Path(args.profile).is_dir() else args.profile
    command += ["--profile", profile] if profile else ["--cores", str(args.workers)]
    print(" ".join(command), flush=True)
    return run_snakemake(out, command, REPO_ROOT)


def _workers(args) -> int:
    """--workers, else the usable cores (`workers.usable_cores`)."""
    from ipcgrasp.workers import usable_cores

    return args.workers or usable_cores()


def _object(mesh, mass: float, name: str | None, repair: bool):
    """GraspObject.from_file, with --repair's report of what changed printed (stderr)."""
    import warnings

    from ipcgrasp import GraspObject
    from ipcgrasp.geometry.mesh import MeshRepairWarning

    with warnings.catch_warnings():
        if repair:  # printed below
            warnings.simplefilter("ignore", MeshRepairWarning)
        obj = GraspObject.from_file(mesh, mass, name=name, repair=repair)
    if obj.repair is not None:
        print(f"--repair: {mesh}: {obj.repair.summary()}", file=sys.stderr, flush=True)
    return obj


def _cmd_generate(args) -> int:
    from ipcgrasp.dataset.records import check_dataset_directory, record_files

    args.workers = _workers(args)
    check_dataset_directory(args.out)
    try:
        if args.shard_size is not None:
            return _generate_with_snakemake(args)
        return _generate(args)
    except KeyboardInterrupt:
        written = len(record_files(args.out))
        print(f"ipcgrasp: interrupted; {written} of {args.n} grasp record(s) written to {args.out}; run the same "
              "command to resume", file=sys.stderr)
        return INTERRUPTED


def _generate(args) -> int:
    """`generate` in this process (`generate_dataset` with --workers processes)."""
    import numpy as np

    from ipcgrasp import GraspObject, SimParams
    from ipcgrasp.dataset import generate_dataset

    gripper = _gripper(args)
    obj = _object(args.mesh, args.mass, args.name, args.repair)
    params = SimParams(E=args.E, mu=args.mu, close_rule=args.close_rule, jaw=gripper.pad_kind,
                       critical_mass=args.critical_mass)
    with _trial_progress() as bar:
        task = bar.add_task(f"{obj.name}: sampling {args.n} antipodal grasps", total=None, status="")
        generation = generate_dataset(
            obj, args.out, args.n, params, n_trials=args.trials, seed=args.seed, workers=args.workers,
            images=not args.no_images, mesh=args.mesh, gripper=gripper,
            on_start=lambda jobs: bar.reset(task, description=f"{obj.name}: {jobs // args.trials} grasp(s) x "
                                                              f"{args.trials} trial(s)", total=jobs, status=""),
            on_trial=lambda i, result: bar.update(task, advance=1, status=f"grasp {i}: {_outcome(result)}"))
    sampling, records = generation.sampling, generation.records
    if len(sampling.candidates) < args.n:
        print(f"only {len(sampling.candidates)} of {args.n} grasps found in {sampling.attempts} attempts "
              f"(rejected: {sampling.rejections})", file=sys.stderr)
    robust = [r["robustness"] for r in records.values()]
    per_record = (f"{generation.wall_time_per_record:.1f} s per record" if generation.written
                  else "nothing to simulate")
    print(f"wrote {len(generation.written)} grasp record(s) to {generation.directory} "
          f"({len(generation.skipped)} already there); sampler accepted {len(sampling.candidates)} of "
          f"{sampling.attempts} attempts ({sampling.acceptance:.0%}); mean robustness {np.mean(robust):.2f} over "
          f"{len(records)} record(s); {per_record}")
    return 0


def _cmd_export(args) -> int:
    from ipcgrasp.dataset.export import DEFAULT_SUCCESS_THRESHOLD, export_acronym
    from ipcgrasp.dataset.records import DATASET_FILE, record_files

    _check_outputs(args, [(args.out, "--out")], [Path(args.dataset) / DATASET_FILE, *record_files(args.dataset)])
    threshold = DEFAULT_SUCCESS_THRESHOLD if args.success_threshold is None else args.success_threshold
    grasps = export_acronym(args.dataset, args.out, args.mesh_file, threshold)
    print(f"wrote {args.out}: {grasps.object_name}, {len(grasps.indices)} grasp(s), {int(grasps.success.sum())} "
          f"labelled success (robustness >= {grasps.success_threshold:g}), object/file {grasps.mesh_file}")
    return 0


def _add_trial_arguments(parser: argparse.ArgumentParser, object_required: bool = True) -> None:
    """The options of a trial command; `object_required` False: --object and --grasp are
    optional for argparse (the command checks them, beside its other ways to name the object)."""
    from ipcgrasp.grasp.params import CLOSE_RULES, SimParams

    defaults = SimParams()
    parser.add_argument("--data",
                        help="REACH data directory (else $IPCGRASP_DATA, ../shared/data/reach, resources/reach)")
    parser.add_argument("--object", required=object_required, help="object name, e.g. cube_3cm")
    parser.add_argument("--grasp", type=int, required=object_required, help="index of the physical grasp (0-based)")
    parser.add_argument("--E", type=float, default=defaults.E, help="pad Young's modulus in Pa (default: %(default)g)")
    parser.add_argument("--mu", type=float, default=defaults.mu, help="pad-object friction (default: %(default)g)")
    parser.add_argument("--close-rule", choices=CLOSE_RULES, default=defaults.close_rule,
                        help="when the gripper stops closing (default: %(default)s)")
    parser.add_argument("--psi-th", type=float, default=defaults.psi_th,
                        help="strain-energy threshold of the psi rule in J (default: %(default)g; the study's "
                             "calibrated value is in results/calibration/psi_th.json)")
    _add_gripper_arguments(parser)
    parser.add_argument("--finger-stiffness", type=float, default=None, metavar="N_PER_M",
                        help="tip bending stiffness of each finger in N/m (default: rigid fingers; "
                             "docs/compliant_fingers.md)")
    parser.add_argument("--seed", type=int, default=0,
                        help="root seed of the pose noise: trial k of grasp G uses the study's seed of (G, k) "
                             "under this root seed (default: %(default)s)")
    parser.add_argument("--no-noise", action="store_true", help="simulate the recorded grasp pose unperturbed")
    parser.add_argument("--fps", type=_positive_float, default=10.0,
                        help="GIF frames per second (default: %(default)g)")
    parser.add_argument("--every", type=_positive_int, default=2,
                        help="GIF uses every k-th simulation step (default: %(default)s)")


def _add_mesh_arguments(parser: argparse.ArgumentParser) -> None:
    """simulate's own object and pose, instead of --object and --grasp (docs/simulate_mesh.md)."""
    parser.add_argument("--mesh", metavar="FILE", help="your own object: a closed mesh in metres (OBJ, STL, PLY, OFF), "
                                                       "instead of --object and --grasp")
    parser.add_argument("--mass", type=_positive_float, help="with --mesh: the object's mass in kg")
    parser.add_argument("--name", help="with --mesh: the object's name in the table and files (default: the file name)")
    parser.add_argument("--repair", action="store_true", default=None,
                        help="with --mesh: make one closed solid of a mesh the check refuses (holes, zero-area or "
                             "flipped faces, several overlapping pieces, self-intersections) and simplify one above "
                             "2000 vertices within 0.1 mm; prints what changed (docs/own_objects.md)")
    parser.add_argument("--pose", metavar="FILE.json",
                        help="with --mesh: a JSON file of 'grasp_pose' (the gripper frame in the object's mesh "
                             "frame) and optionally 'object_pose' (the mesh frame in the world), each a 4x4 or "
                             "{position, quaternion_wxyz}")
    parser.add_argument("--grasp-pose", type=float, nargs="+", metavar="X",
                        help="with --mesh: the gripper frame in the object's mesh frame, 16 numbers (a 4x4 "
                             "transform, row by row) or 7 (position x y z in m, then quaternion w x y z)")
    parser.add_argument("--object-pose", type=float, nargs="+", metavar="X",
                        help="with --grasp-pose: the mesh frame in the world, the same numbers (default: the "
                             "object's most stable resting pose)")


def _add_overwrite_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--overwrite", action="store_true",
                        help="replace output files that exist (without it they are refused before any work)")


def _add_gripper_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--gripper", default="yumi", metavar="NAME|FILE",
                        help="gripper: a shipped description's name or a description YAML file (default: "
                             "%(default)s; `ipcgrasp grippers` lists them, docs/grippers.md explains the format)")
    parser.add_argument("--jaw", default=None, metavar="PAD",
                        help="pad variant of the gripper, e.g. rounded or rectangular (default: the description's "
                             "default_pad)")


class _VersionAction(argparse.Action):
    """--version: argparse's version action, with the version looked up only when asked for
    (`importlib.metadata` is not free)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS,
                 help="show program's version number and exit"):
        super().__init__(option_strings=option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        from ipcgrasp import __version__

        parser._print_message(f"ipcgrasp {__version__}\n", sys.stdout)
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    """The command line. It imports only light modules (no numba, xarray, trimesh, matplotlib, not
    even numpy), so that `--help`, `--version` and argument errors answer at once: each command
    imports what it needs when it runs, and what the parser checks lives in light modules."""
    from ipcgrasp.baselines.image_quality_settings import DEFAULT_RESOLUTION
    from ipcgrasp.grasp.params import CLOSE_RULES, SimParams
    from ipcgrasp.paths import RESOURCES_REACH
    from ipcgrasp.viz.view_options import ELEVATION, parse_azimuth, parse_elevation, parse_size

    parser = argparse.ArgumentParser(prog="ipcgrasp", description=__doc__)
    parser.add_argument("--version", action=_VersionAction)
    commands = parser.add_subparsers(dest="command", required=True)

    data = commands.add_parser("data", help="locate, fetch or import physical grasp data").add_subparsers(dest="action", required=True)
    where = data.add_parser("where", help="print the data directory ipcgrasp would use")
    where.add_argument("--data", help="explicit data directory (else $IPCGRASP_DATA, ../shared/data/reach, resources/reach)")
    where.set_defaults(func=_cmd_data_where)
    fetch = data.add_parser("fetch", help="download the IPC-GraspSim data archive and unpack it")
    fetch.add_argument("--dest", default=str(RESOURCES_REACH), help="target directory (default: %(default)s)")
    fetch.set_defaults(func=_cmd_data_fetch)
    load = data.add_parser("import", help="check your own physical trials (docs/own_data.md) and write them "
                                          "in the REACH layout the study reads, with their object registry")
    load.add_argument("source", metavar="TRIALS.json", help="the trials file (docs/own_data.md)")
    load.add_argument("dest", metavar="DEST", help="new or empty directory, or one a previous import wrote")
    load.add_argument("--repair", action="store_true",
                      help="make one closed solid of each object mesh the check refuses (holes, zero-area or flipped "
                           "faces, several overlapping pieces, self-intersections), simplifying a repaired one above "
                           "2000 vertices within 0.1 mm, as generate --repair does; DEST gets the repaired mesh, your "
                           "file is unchanged; prints what changed (docs/own_data.md)")
    load.set_defaults(func=_cmd_data_import)

    grippers = commands.add_parser("grippers", help="list the shipped gripper descriptions (name, stroke, force "
                                                    "limit, pads with * the default, source)")
    grippers.set_defaults(func=_cmd_grippers)

    objects = commands.add_parser("objects", help="list the object registry")
    objects.add_argument("--registry", help="path of an objects.yaml (default: config/objects.yaml)")
    objects.add_argument("--data", help="data directory whose objects are marked as local (default: the one "
                                        "`ipcgrasp data where` prints)")
    objects.set_defaults(func=_cmd_objects)

    compile_ = commands.add_parser("compile", help="compile the simulator's numba kernels into numba's on-disk cache "
                                   "ahead of the first trial (./run.sh does it after installing)")
    compile_.add_argument("--jobs", type=_positive_int, default=None,
                          help="processes compiling at once (default: the usable cores, at most 4)")
    compile_.set_defaults(func=_cmd_compile)

    simulate = commands.add_parser("simulate", help="simulate perturbed trials of one physical grasp (--object, "
                                                    "--grasp) or of your own mesh and pose (--mesh, --mass, --pose)")
    _add_trial_arguments(simulate, object_required=False)
    _add_mesh_arguments(simulate)
    simulate.add_argument("--trials", type=_positive_int, default=5, help="number of trials (default: %(default)s)")
    simulate.add_argument("--workers", type=_positive_int, default=None,
                          help=f"processes running trials in parallel (default: {WORKERS_DEFAULT}, at most --trials)")
    simulate.add_argument("--render", metavar="OUT.gif", type=_output(*RENDER_SUFFIXES),
                          help="render the first trial: animated GIF plus OUT_first.png and OUT_final.png "
                               "(a .png path: first and final frame side by side)")
    simulate.add_argument("--json", metavar="OUT.json", type=_output(), help="write the trial summaries as JSON")
    simulate.add_argument("--trajectory", metavar="OUT.nc", type=_output(".nc"),
                          help="record the first trial's trajectory (per-step forces, poses, contacts) as NetCDF")
    simulate.add_argument("--trajectory-dir", metavar="DIR", type=_output(directory=True),
                          help="record every trial's trajectory as DIR/{object}_grasp{G}_trial{k}.nc")
    simulate.add_argument("--vertices", action="store_true",
                          help="keep every body's vertex positions in the first trial's --trajectory "
                               "(for `ipcgrasp view`)")
    simulate.add_argument("--critical-mass", action="store_true",
                          help="after each successful hold, ramp the object's mass at 1.2 kg/s until it slips "
                               "(PrendoSim critical mass)")
    _add_overwrite_argument(simulate)
    simulate.set_defaults(func=_cmd_simulate)

    plot = commands.add_parser("plot", help="plot a trajectory file: forces, jaw opening, object height and "
                                            "rotation against time (PNG)")
    plot.add_argument("trajectory", metavar="TRAJECTORY.nc", help="a file of `simulate --trajectory`")
    plot.add_argument("--out", metavar="OUT.png", type=_output(".png"), help="the picture (default: TRAJECTORY.png)")
    _add_overwrite_argument(plot)
    plot.set_defaults(func=_cmd_plot)

    frames = commands.add_parser("frames", help="write a trajectory's bodies as one mesh file per step and body "
                                                "(for Blender or any renderer), with frames.csv of their times")
    frames.add_argument("trajectory", metavar="TRAJECTORY.nc",
                        help="a file of `simulate --trajectory OUT.nc --vertices` (vertex positions needed)")
    frames.add_argument("--out", required=True, metavar="DIR", type=_output(directory=True),
                        help="directory of <body>_<step>.obj (or .ply) and frames.csv")
    frames.add_argument("--format", choices=("obj", "ply"), default="obj", help="mesh format (default: %(default)s)")
    frames.add_argument("--every", type=_positive_int, default=1,
                        help="write every k-th step, and the last (default: %(default)s)")
    _add_overwrite_argument(frames)
    frames.set_defaults(func=_cmd_frames)

    view = commands.add_parser("view", help="interactive 3D replay of a trajectory file in the browser")
    view.add_argument("trajectory", metavar="TRAJECTORY.nc",
                      help="a file of `simulate --trajectory OUT.nc --vertices` (vertex positions needed)")
    view.add_argument("--host", default="127.0.0.1", help="address to serve on (default: %(default)s)")
    view.add_argument("--port", type=_port, default=8080, help="port (default: %(default)s; 0: any free one)")
    view.set_defaults(func=_cmd_view)

    replay = commands.add_parser("replay", help="rerun one stored trial of a study cube bit for bit and compare")
    replay.add_argument("cube", metavar="CUBE.nc", help="a simulation cube, e.g. results/grid/rounded.nc")
    replay.add_argument("--data",
                        help="REACH data directory (else $IPCGRASP_DATA, ../shared/data/reach, resources/reach)")
    replay.add_argument("--object", required=True, help="object name, e.g. cube_3cm")
    replay.add_argument("--grasp", type=int, required=True, help="index of the physical grasp (0-based)")
    replay.add_argument("--trial", type=_non_negative_int, required=True, help="trial index in the cube")
    replay.add_argument("--E", type=float, help="the cube's E in Pa (needed when it has several)")
    replay.add_argument("--mu", type=float, help="the cube's mu (needed when it has several)")
    replay.add_argument("--rule", choices=CLOSE_RULES, help="the cube's close rule (needed when it has several)")
    replay.add_argument("--jaw", help="the cube's jaw (needed when it has several)")
    replay.add_argument("--finger-stiffness", type=float, metavar="N_PER_M",
                        help="a finger cube's finger stiffness in N/m, inf for its rigid fingers (needed when "
                             "it has several)")
    replay.add_argument("--config", metavar="CONFIG.yaml",
                        help="the study's config, for its fixed `sim` parameters (only for cubes without the "
                             "sim_params attribute)")
    replay.add_argument("--render", metavar="OUT.gif", type=_output(*RENDER_SUFFIXES), help="render the replayed trial (a .png: first and final)")
    replay.add_argument("--trajectory", metavar="OUT.nc", type=_output(".nc"), help="record the replayed trial's trajectory")
    replay.add_argument("--vertices", action="store_true",
                        help="keep every body's vertex positions in the trajectory (for `ipcgrasp view`)")
    _add_overwrite_argument(replay)
    replay.set_defaults(func=_cmd_replay, fps=10.0, every=2)

    render = commands.add_parser("render", help="simulate one trial of a grasp and render it")
    _add_trial_arguments(render)
    render.add_argument("--out", required=True, metavar="OUT.gif", type=_output(*RENDER_SUFFIXES),
                        help="animated GIF plus OUT_first.png and OUT_final.png; a .png path: first and "
                             "final frame side by side")
    render.add_argument("--azimuth", type=_argument(parse_azimuth), default=None,
                        help="camera azimuth in deg, from +x towards +y (default: across the closing direction)")
    render.add_argument("--elevation", type=_argument(parse_elevation), default=ELEVATION,
                        help="camera elevation above the ground in deg (default: %(default)g)")
    render.add_argument("--size", type=_argument(parse_size), default=(640, 480), metavar="WxH",
                        help="picture size in pixels, each half of a .png pair (default: 640x480)")
    _add_overwrite_argument(render)
    render.set_defaults(func=_cmd_render, critical_mass=False)

    quality = commands.add_parser("quality", help="image-space quality of a physical grasp (Tan et al.): "
                                                  "silhouette along the approach, six features, score")
    quality.add_argument("--data",
                         help="REACH data directory (else $IPCGRASP_DATA, ../shared/data/reach, resources/reach)")
    quality.add_argument("--object", required=True, help="object name, e.g. cube_3cm")
    quality.add_argument("--grasp", type=int, required=True, help="index of the physical grasp (0-based)")
    quality.add_argument("--trials", type=_positive_int, default=1,
                         help="perturbed grasps, the seeds `simulate` uses (default: %(default)s)")
    quality.add_argument("--seed", type=int, default=0, help="root seed of the pose noise (default: %(default)s)")
    quality.add_argument("--no-noise", action="store_true", help="evaluate the recorded grasp pose unperturbed")
    quality.add_argument("--resolution", type=_positive_float, default=DEFAULT_RESOLUTION,
                         help="silhouette pixel size in m (default: %(default)g)")
    quality.add_argument("--gripper", default="yumi", metavar="NAME|FILE",
                         help="gripper description: pad width and opening (default: %(default)s; see `ipcgrasp grippers`)")
    quality.set_defaults(jaw=None)
    quality.add_argument("--png", metavar="OUT.png", type=_output(".png"), help="picture of the first trial's evaluation")
    _add_overwrite_argument(quality)
    quality.set_defaults(func=_cmd_quality)

    defaults = SimParams()
    generate = commands.add_parser("generate", help="sample antipodal grasps on your own mesh and label them by "
                                                    "simulation (JSON + PNG per grasp, index.csv)")
    generate.add_argument("--mesh", required=True,
                          help="object mesh in metres (OBJ, STL, PLY, OFF: any format trimesh reads)")
    generate.add_argument("--mass", type=_positive_float, required=True, help="object mass in kg")
    generate.add_argument("--n", type=_positive_int, required=True, help="number of grasps")
    generate.add_argument("--out", required=True, type=_output(directory=True),
                          help="output directory: new, empty, or one generate made (a rerun skips the records "
                               "already there)")
    generate.add_argument("--name", help="object name in the records (default: the mesh file name)")
    generate.add_argument("--repair", action="store_true",
                          help="make one closed solid of a mesh the check refuses (holes, zero-area or flipped faces, "
                               "several overlapping pieces, self-intersections) and simplify one above 2000 vertices "
                               "within 0.1 mm; prints what changed (docs/own_objects.md)")
    generate.add_argument("--trials", type=_positive_int, default=5,
                          help="perturbed trials per grasp (default: %(default)s)")
    generate.add_argument("--workers", type=_positive_int, default=None,
                          help=f"processes running trials in parallel, or with --shard-size Snakemake's local "
                               f"cores (default: {WORKERS_DEFAULT})")
    generate.add_argument("--E", type=float, default=defaults.E,
                          help="pad Young's modulus in Pa (default: %(default)g)")
    generate.add_argument("--mu", type=float, default=defaults.mu,
                          help="pad-object friction, also the sampler's friction cones (default: %(default)g)")
    generate.add_argument("--close-rule", choices=CLOSE_RULES, default=defaults.close_rule,
                          help="when the gripper stops closing (default: %(default)s)")
    _add_gripper_arguments(generate)
    generate.add_argument("--seed", type=_non_negative_int, default=0,
                          help="root seed of the sampler and the pose noise (default: %(default)s)")
    generate.add_argument("--critical-mass", action="store_true",
                          help="after each successful hold, ramp the object's mass until it slips (PrendoSim)")
    generate.add_argument("--no-images", action="store_true", help="write no PNG pictures")
    generate.add_argument("--shard-size", type=_positive_int, metavar="K",
                          help="run as Snakemake jobs of K grasps each (workflow/generate.smk), merged into the "
                               "same records and index.csv as one process writes")
    generate.add_argument("--profile", metavar="DIR",
                          help="with --shard-size: a Snakemake profile choosing the executor, e.g. profiles/slurm "
                               "(default: local jobs on --workers cores)")
    generate.set_defaults(func=_cmd_generate)

    export = commands.add_parser("export", help="write a generate dataset in a format grasp-learning pipelines "
                                                "read (docs/export.md)")
    export.add_argument("dataset", metavar="DATASET", help="the --out directory of `ipcgrasp generate`")
    export.add_argument("--format", required=True, choices=("acronym",),
                        help="acronym: ACRONYM-style HDF5 (object mesh file, scale, mass, grasp transforms in the "
                             "object frame, success labels)")
    export.add_argument("--out", required=True, metavar="OUT.h5", type=_output(".h5", ".hdf5"), help="the file")
    export.add_argument("--mesh-file", metavar="PATH",
                        help="object/file as readers resolve it, e.g. relative to their mesh root (default: the "
                             "mesh path given to generate)")
    export.add_argument("--success-threshold", type=_positive_float, metavar="R",
                        help="label a grasp a success when this fraction of its trials held, in (0, 1] "
                             "(default: 0.5, a majority)")
    _add_overwrite_argument(export)
    export.set_defaults(func=_cmd_export)
    return parser


def _one_line(exc: BaseException) -> str:
    """The error's message on one line (MemoryError, which has none, with the fix)."""
    if isinstance(exc, MemoryError):
        return "out of memory; fix: fewer --workers, a coarser --resolution, or a smaller mesh"
    return " ".join(str(exc).split()) or type(exc).__name__


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    print(f"ipcgrasp: warning: {message}", file=sys.stderr)


def _reported(exc: Exception) -> bool:
    """Whether `main` reports the command's error on one line (exit code 2) rather than as a
    traceback: bad input, a missing file, a failed run, a YAML error, memory."""
    yaml = sys.modules.get("yaml")  # only a command that imported yaml raises its errors
    return isinstance(exc, (OSError, ValueError, RuntimeError, MemoryError)) or \
        (yaml is not None and isinstance(exc, yaml.YAMLError))


def main(argv: list[str] | None = None) -> int:
    """Run the command `argv` (default: this process's command line, which the process ends
    after: see `_before_exit`); returns the exit code."""
    import warnings

    args = build_parser().parse_args(argv)
    args.owns_process = argv is None
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _show_warning
            return args.func(args)
    except Exception as exc:
        if not _reported(exc):
            raise
        message = str(exc) if getattr(exc, "keeps_lines", False) else _one_line(exc)
        print(f"ipcgrasp: error: {message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("ipcgrasp: interrupted", file=sys.stderr)
        return INTERRUPTED
    finally:
        if argv is None:
            _before_exit()


def _before_exit() -> None:
    """After the process's own command, which it ends with: freeze what the garbage collector
    tracks. Interpreter shutdown otherwise runs full collections over everything still alive, the
    modules, numba's types and kernels and trimesh's and scipy's objects among it, about 0.3 s
    after a simulated trial. Frozen objects are left to the end of the process; reference counts
    still free the rest and atexit handlers still run."""
    import gc

    gc.freeze()


if __name__ == "__main__":
    sys.exit(main())
