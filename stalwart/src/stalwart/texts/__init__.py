"""Every sentence a person reads from a run, in one place.

The chapter's sentences (chapter 34) are copied character for character; the rest
are designed in the same voice: short, plain, naming the tool, the step and the cause.
Functions take the facts and return the exact text; nothing else in the runtime
writes a sentence a person reads.

One module per area; every name is re-exported here, so `texts.X` and
`from stalwart.texts import X` name the same text wherever it lives. The interface's own
sentences are in `texts.serve`.
"""

from . import serve as serve  # the interface's own sentences: texts.serve.X
from .cli import *  # noqa: F403
from .errors import *  # noqa: F403
from .guarded import *  # noqa: F403
from .limits import *  # noqa: F403
from .lints import *  # noqa: F403
from .logs import *  # noqa: F403
from .model import *  # noqa: F403
from .operator import *  # noqa: F403
from .probe import *  # noqa: F403
from .questions import *  # noqa: F403
from .refusals import *  # noqa: F403
from .replies import *  # noqa: F403
from .rollback import *  # noqa: F403
from .selector import *  # noqa: F403
from .tools import *  # noqa: F403
from .verify import *  # noqa: F403
