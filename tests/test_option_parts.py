"""Parts chosen by a constructor option that no construction takes (project_pass/option_parts.py;
fixtures/regions/option_parts.py, measured under torch there)."""
import os

from compilelint.config import Settings
from compilelint.engine import check_paths

from conftest import FIXTURES

PATH = os.path.join(FIXTURES, "regions", "option_parts.py")
PRINT_ROW = next(i for i, line in enumerate(open(PATH, encoding="utf-8"), 1) if 'print("relative' in line)


def _codes(entry):
    report = check_paths([PATH], Settings(cache=False, named_alone=True, entries=[f"{PATH}:{entry}"]))
    assert not report.errors
    return sorted((f.span.row, f.code) for f in report.findings)


def test_a_part_no_construction_chooses_is_not_reached():
    assert _codes("Model") == []  # every Decoder is built with kind="plain": no Relative


def test_the_user_built_class_keeps_every_option():
    assert _codes("Layer") == [(PRINT_ROW, "CL201")]  # Layer(kind=...) is the user's: Relative can run


def test_an_inherited_init_takes_the_options_of_the_subclass_chain():
    assert _codes("PlainStack") == []  # its super().__init__() leaves kind="plain"
    assert _codes("AnyStack") == [(PRINT_ROW, "CL201")]  # hands on the user's kind


def test_a_class_built_with_unknown_arguments_keeps_every_option(tmp_path):
    source = open(PATH, encoding="utf-8").read().replace('Decoder(kind="plain")', "Decoder(**options)")
    source = source.replace("def __init__(self):\n        super().__init__()\n        self.decoder",
                            "def __init__(self, **options):\n        super().__init__()\n        self.decoder")
    path = tmp_path / "option_parts.py"
    path.write_text(source, encoding="utf-8")
    report = check_paths([str(path)], Settings(cache=False, named_alone=True, entries=[f"{path}:Model"]))
    assert sorted((f.span.row, f.code) for f in report.findings) == [(PRINT_ROW, "CL201")]
