"""One grasp of any object mesh in any pose, as `ipcgrasp simulate --mesh` takes it
(docs/simulate_mesh.md): the options checked before any work (`mesh_options`), and the grasp in
the world, shaped as the trial commands read a REACH object's physical grasps (`MeshGrasp`).

Frames: the grasp pose is the gripper frame (docs/grippers.md) in the object's mesh frame, as
ACRONYM stores grasps and `ipcgrasp export` writes them; the object pose is the mesh frame in the
world (z up, ground z = 0), by default the object's most stable resting pose. The world grasp is
object pose @ grasp pose. The simulator then moves object and gripper together along z so that
the object's lowest point is 1 mm above the ground (`grasp.scene.place_scene`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ipcgrasp.grasp.pose_input import pose_from_numbers, read_pose_file


@dataclass(frozen=True, eq=False)
class MeshOptions:
    """`simulate --mesh`'s object and poses, checked: mesh file, mass (kg), name, the grasp pose
    in the object's mesh frame and the object pose in the world (None: resting pose), 4x4, m."""

    mesh: Path
    mass: float
    name: str
    grasp_pose: np.ndarray
    object_pose: np.ndarray | None

    def summary(self) -> dict:
        """JSON-ready: mesh path, mass, and the poses as given (object pose None: resting pose)."""
        return {"mesh": str(self.mesh), "mass": self.mass, "grasp_pose_in_object": self.grasp_pose.tolist(),
                "object_pose": None if self.object_pose is None else self.object_pose.tolist()}


def mesh_options(args) -> MeshOptions:
    """The --mesh options of `args` checked, poses read and parsed: ValueError naming the option
    (or the pose file's field) and the fix. REACH options (--object, --grasp, --data) are
    refused beside --mesh; --mass and one of --pose / --grasp-pose are required with it."""
    for option, value in (("--object", args.object), ("--grasp", args.grasp), ("--data", args.data)):
        if value is not None:
            raise ValueError(f"{option} names a REACH grasp and --mesh your own object; fix: give one of them")
    if args.mass is None:
        raise ValueError("--mesh needs --mass (the object's mass in kg); fix: add e.g. --mass 0.05")
    if (args.pose is None) == (args.grasp_pose is None):
        raise ValueError("--mesh needs the grasp pose from exactly one of --pose FILE.json and --grasp-pose; fix: give "
                         "one (docs/simulate_mesh.md)")
    if args.pose is not None:
        if args.object_pose is not None:
            raise ValueError("--object-pose goes with --grasp-pose; with --pose, give 'object_pose' in the pose file; "
                             "fix: move it into the pose file, or use --grasp-pose")
        poses = read_pose_file(args.pose)
        grasp_pose, object_pose = poses.grasp_pose, poses.object_pose
    else:
        grasp_pose = pose_from_numbers(args.grasp_pose, "--grasp-pose")
        object_pose = None if args.object_pose is None else pose_from_numbers(args.object_pose, "--object-pose")
    mesh = Path(args.mesh)
    if not mesh.is_file():
        raise FileNotFoundError(f"--mesh {mesh}: no such file; fix: give an object mesh in metres (OBJ, STL, PLY, OFF)")
    return MeshOptions(mesh, args.mass, args.name or mesh.stem, grasp_pose, object_pose)


@dataclass(frozen=True, eq=False)
class MeshGrasp:
    """The grasp of `MeshOptions` in the world as grasp 0 of a REACH object's physical grasps
    (`data.reach.PhysicalGrasps`): object_poses and grasp_poses (1, 4, 4), world, m. It has no
    physical trials: its robustness is NaN."""

    object_name: str
    object_poses: np.ndarray
    grasp_poses: np.ndarray

    n_grasps = 1

    @property
    def robustness(self) -> np.ndarray:
        return np.array([np.nan])


def mesh_grasp(obj, options: MeshOptions) -> MeshGrasp:
    """The world poses of `options`' grasp of the GraspObject `obj`: its object pose, or its most
    stable resting pose 1 mm above the ground (the pose `generate` samples and records grasps
    on), and object pose @ grasp pose."""
    from ipcgrasp.grasp.scene import place_scene

    if options.object_pose is None:
        object_pose, _ = place_scene(obj.mesh, obj.stable_pose(), np.eye(4))
    else:
        object_pose = options.object_pose
    return MeshGrasp(obj.name, object_pose[None], (object_pose @ options.grasp_pose)[None])
