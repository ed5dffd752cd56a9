"""How pad friction changes the robustness of one grasp: two perturbed trials of grasp 8 of the
3 cm cube at two friction coefficients (the study's seeding rule, a short lift so it runs in
seconds), next to the physical robustness.

    .venv/bin/python examples/friction_robustness.py
"""

from ipcgrasp import GraspObject, SimParams, robustness
from ipcgrasp.data.location import resolve_data_dir
from ipcgrasp.data.reach import load_object, load_physical_grasps

GRASP = 8
data = resolve_data_dir()
obj = GraspObject.from_file(*load_object(data, "cube_3cm"), name="cube_3cm")
grasps = load_physical_grasps(data, "cube_3cm")
print(f"grasp {GRASP}: physical robustness {grasps.robustness[GRASP]:.2f}")
for mu in (0.1, 0.4):
    params = SimParams(mu=mu, close_rule="force", lift_height=0.005, hold_time=0.04)
    trials = robustness(obj, grasps.object_poses[GRASP], grasps.grasp_poses[GRASP], params, n_trials=2, seed=0,
                        workers=1, grasp_index=GRASP).trials
    outcomes = ", ".join("success" if t.success else t.failure_mode for t in trials)
    print(f"mu = {mu}: R = {sum(t.success for t in trials) / len(trials):.2f} ({outcomes})")
    for t in trials:
        print("   ", t)
