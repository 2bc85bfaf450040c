"""The README's code examples run and print what they say; the docs name what the code has."""

import doctest
import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def _python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)


def test_readme_doctest_examples_hold():
    blocks = [b for b in _python_blocks() if b.lstrip().startswith(">>>")]
    assert blocks, "the README lost its card/hand examples"
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    for i, block in enumerate(blocks):
        test = parser.get_doctest(block, {}, f"README block {i}", str(README), 0)
        runner.run(test)
    assert runner.failures == 0


def test_readme_script_examples_run():
    scripts = [b for b in _python_blocks() if not b.lstrip().startswith(">>>")]
    assert len(scripts) >= 2, "the README lost its env / engine examples"
    for block in scripts:
        exec(compile(block, str(README), "exec"), {"__name__": "readme_example"})


def test_rules_doc_names_every_rule_that_can_decide_a_hand():
    """docs/RULES.md has a row for each code of ``HandResult.rule``, and no stale one."""
    from scat_env.showdown import RULES

    doc = (README.parent / "docs" / "RULES.md").read_text(encoding="utf-8")
    section = doc.split("### Which rule decided a hand", 1)[1].split("\n## ", 1)[0]
    codes = re.findall(r"^\| `([a-z_]+)` \|", section, re.M)
    assert codes == list(RULES)
