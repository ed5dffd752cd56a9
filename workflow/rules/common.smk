# Helpers shared by every stage: config validation and data location.
from snakemake.utils import validate

from ipcgrasp.data.location import resolve_data_dir

validate(config, schema="../schemas/config.schema.yaml")

DATA_DIR = resolve_data_dir(config.get("data_dir") or None)
REGISTRY = config["registry"]
