"""Grasp datasets for a user's own object: antipodal parallel-jaw candidates on a mesh
(`antipodal`), labelled by simulation into JSON + PNG records with a CSV index (`records`),
in one process or as Snakemake jobs over shards of the grasps (`shards`, workflow/generate.smk).

    from ipcgrasp import GraspObject, SimParams
    from ipcgrasp.dataset import generate_dataset

    obj = GraspObject.from_file("my.obj", mass=0.05)
    generate_dataset(obj, "my_grasps", n=200, params=SimParams(mu=0.4), n_trials=5, workers=2)
"""

from ipcgrasp.dataset.antipodal import GraspCandidate, SamplerSettings, Sampling, sample_antipodal_grasps
from ipcgrasp.dataset.records import (
    Generation,
    RecordError,
    generate_dataset,
    index_table,
    load_schema,
    read_records,
    validate_record,
)

__all__ = [
    "Generation",
    "GraspCandidate",
    "RecordError",
    "SamplerSettings",
    "Sampling",
    "generate_dataset",
    "index_table",
    "load_schema",
    "read_records",
    "sample_antipodal_grasps",
    "validate_record",
]
