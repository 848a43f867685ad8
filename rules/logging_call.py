import ast

from compilelint.analysis import tensors as T
from compilelint.analysis.astutil import falls_into_raise
from compilelint.fix import builder
from compilelint.fix.notes import NOT_UNDER_COMPILE, explained
from compilelint.rule import Rule

# fix builders, imported when a finding asks for its fix
guard_statement = builder("guard", "guard_statement")

LOGGER_METHODS = frozenset({
    "debug", "info", "warning", "warn", "error", "exception", "critical", "fatal", "log",
    "isEnabledFor", "getEffectiveLevel", "info_once", "warning_once", "debug_once", "warning_advice",
})
LOGGING_FUNCTIONS = frozenset({
    "logging.debug", "logging.info", "logging.warning", "logging.warn", "logging.error",
    "logging.exception", "logging.critical", "logging.fatal", "logging.log",
})


class LoggingCall(Rule):
    """
    ## What it does
    Finds calls to `logging.Logger` methods (every one, `isEnabledFor` included) and to the
    `logging.info()`-style module functions inside compiled code.

    ## Why is this bad?
    Dynamo does not trace the logging machinery. Every Logger method call graph-breaks
    ("logging.Logger method not supported for non-export cases", GB0291), including the
    `if logger.isEnabledFor(logging.DEBUG):` guard people add to make logging cheap.
    `logging.info(...)` breaks too (GB4841 on 2.13, GB0156 on 2.11).

    ## Example
    ```python
    logger.debug("routing %d tokens", n)
    ```

    ## Use instead
    Guard it with `if not torch.compiler.is_compiling():`, log outside the compiled region, or
    have Dynamo drop the calls: `torch._dynamo.config.ignore_logger_methods = {logging.Logger.info, ...}`
    (`ignore_logging_functions` in 2.13). `reorderable_logging_functions = {logging.info}` works for
    the module-level functions only.

    ## Fix safety
    Unsafe. A statement that is only the call, on lines of its own, goes under
    `if not torch.compiler.is_compiling():` (with `import torch` added when the file has no name
    for torch). Eager runs it as before; under torch.compile it no longer runs at all, so the log record
    is lost in compiled code.

    ## References
    https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0291.html
    """

    code = "CL202"
    name = "logging"
    triggers = ('debug', 'info', 'warn', 'error', 'exception', 'critical', 'fatal', 'log', 'isEnabledFor', 'getEffectiveLevel')
    message = ("Logger method calls graph-break ({gb}): guard with `if not torch.compiler.is_compiling():` "
               "or set torch._dynamo.config.ignore_logger_methods")
    gb_types = ("logging.Logger method not supported for non-export cases", "Unsupported python_type() call")
    gb_ids = {"2.13": ("GB0291", "GB4841"), "2.11": ("GB0291", "GB0156")}
    fix = "unsafe"

    def visit_Call(self, node: ast.Call):
        func = node.func
        name = self.ctx.resolve(func)
        if (name in LOGGING_FUNCTIONS or isinstance(func, ast.Attribute) and func.attr in LOGGER_METHODS) and \
                falls_into_raise(self.ctx.stack, self.ctx.statement()):
            return  # a log before a `raise` (`logger.warning("out of memory ..."); raise e`): the path fails either way
        if name in LOGGING_FUNCTIONS:
            self.report(node, f"`{name}()` graph-breaks: guard it with `if not torch.compiler.is_compiling():` "
                              f"or add it to torch._dynamo.config.reorderable_logging_functions",
                        fix=explained(guard_statement(self.ctx, node, f"`{name}()`"), NOT_UNDER_COMPILE))
            return
        if isinstance(func, ast.Attribute) and func.attr in LOGGER_METHODS and self._is_logger(func.value):
            self.report(node, fix=explained(guard_statement(self.ctx, node, "the logging call"), NOT_UNDER_COMPILE))

    def _is_logger(self, value: ast.AST) -> bool:
        if self.ctx.kind(value) == T.LOGGER:
            return True
        # logging.getLogger(__name__).info(...), self.logger.info(...)
        if isinstance(value, ast.Call):
            name = self.ctx.resolve(value.func) or ""
            return name.rsplit(".", 1)[-1] in T.LOGGER_FACTORIES
        return isinstance(value, ast.Attribute) and value.attr in ("logger", "_logger", "log")

    # (before, after `--fix --unsafe-fixes`): what the fix does; tests/test_fix.py runs them.
    FIXES = [
        (
            """
import logging
import torch
from torch import nn

logger = logging.getLogger(__name__)

class Block(nn.Module):
    def forward(self, x):
        logger.debug("block %s", x.shape)
        return x * 2
""",
            """
import logging
import torch
from torch import nn

logger = logging.getLogger(__name__)

class Block(nn.Module):
    def forward(self, x):
        if not torch.compiler.is_compiling():
            logger.debug("block %s", x.shape)
        return x * 2
""",
        ),
    ]

    INVALID = [
        """
import logging
import torch
from torch import nn

logger = logging.getLogger(__name__)

class Router(nn.Module):
    def forward(self, x):
        if logger.isEnabledFor(logging.DEBUG):  # <-
            logger.debug("routing %s", x.shape)  # <-
        logging.info("forward")  # <-
        return x.softmax(-1)
""",
    ]
    VALID = [
        """
import logging
import torch
from torch import nn

logger = logging.getLogger(__name__)

class Router(nn.Module):
    def __init__(self):
        super().__init__()
        logger.info("built router")  # __init__ is not compiled

    def forward(self, x):
        if not torch.compiler.is_compiling():
            logger.debug("routing %s", x.shape)
        return x.softmax(-1)
""",
    ]
