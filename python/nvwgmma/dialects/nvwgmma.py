"""The nvwgmma dialect: generated op and enum classes plus friendly builders."""

from ._nvwgmma_ops_gen import *  # noqa: F401,F403
from ._nvwgmma_enum_gen import *  # noqa: F401,F403
from ._nvwgmma_builders import *  # noqa: F401,F403
