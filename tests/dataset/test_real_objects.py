"""The sampler on real meshes (benchmarks/objects.py, from pybullet_data): every grasp it emits
starts with both jaws, opened to the widest, clear of the object and above the ground, checked
by an independent query (dense jaw surface samples against the object's triangles)."""

import importlib.util
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import trimesh

from ipcgrasp import GraspObject
from ipcgrasp.dataset.antipodal import SamplerSettings, sample_antipodal_grasps
from ipcgrasp.geometry import backing_plate, pad_surface
from ipcgrasp.geometry.repair import distance_to_surface
from ipcgrasp.grasp.gripper import Gripper

_spec = importlib.util.spec_from_file_location("objects", Path(__file__).parents[2] / "benchmarks" / "objects.py")
objects = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("objects", objects)  # its dataclass looks its module up there
_spec.loader.exec_module(objects)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["mug", "teddy", "duck"])
def test_sampled_grasps_start_clear_of_object_and_ground(name):
    objects.skip_without_pybullet()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        obj = GraspObject.from_mesh(objects.load(name).mesh, 0.05, name, repair=True)
    settings = SamplerSettings(mu=0.4)
    sampling = sample_antipodal_grasps(obj, 12, settings, seed=1)
    assert len(sampling.candidates) == 12
    world = obj.mesh.copy().apply_transform(sampling.object_pose)
    rng = np.random.default_rng(0)
    pad, backing = pad_surface("rounded"), backing_plate()
    local = np.vstack([pad.vertices, backing.vertices, trimesh.sample.sample_surface(pad, 3000, seed=rng)[0],
                       trimesh.sample.sample_surface(backing, 3000, seed=rng)[0]])
    gripper = Gripper.yumi()
    for candidate in sampling.candidates:
        for pose in gripper.tooltip_poses(candidate.grasp_pose, gripper.max_opening):
            points = trimesh.transform_points(local, pose)
            assert points[:, 2].min() >= settings.ground_clearance - 1e-9
            assert not world.contains(points).any()
            assert distance_to_surface(points, world).min() >= settings.clearance + settings.noise_margin - 1e-6
