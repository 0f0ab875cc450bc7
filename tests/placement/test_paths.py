"""Repository paths mapped to installed paths: src/ and python/ prefixes, renamed packages, not shipped."""

from __future__ import annotations

from prstack.placement.paths import PathMap, Placement


def test_src_layout() -> None:
    pmap = PathMap(
        ["demo/__init__.py", "demo/runner.py", "demo/sub/x.py", "demo-1.0.dist-info/RECORD"],
        ["src/demo/__init__.py", "src/demo/runner.py", "src/demo/sub/x.py", "tests/test_runner.py",
         "docs/index.md", "README.md"],
    )
    assert pmap.locate("src/demo/runner.py").installed_path == "demo/runner.py"
    assert pmap.locate("src/demo/sub/x.py").placement is Placement.SHIPPED
    assert pmap.locate("tests/test_runner.py").placement is Placement.NOT_SHIPPED
    assert pmap.locate("docs/index.md").placement is Placement.NOT_SHIPPED
    missing = pmap.locate("src/demo/new_module.py")
    assert missing.placement is Placement.FILE_MISSING and missing.installed_path == "demo/new_module.py"


def test_python_prefix_and_renamed_top_level_package() -> None:
    installed = ["sgl/__init__.py", "sgl/srt/a.py", "sgl/srt/b.py", "sgl/lang/c.py"]
    repo = ["python/sglang_src/__init__.py", "python/sglang_src/srt/a.py", "python/sglang_src/srt/b.py",
            "python/sglang_src/lang/c.py", "test/srt/test_a.py"]
    pmap = PathMap(installed, repo)
    assert pmap.locate("python/sglang_src/srt/a.py").installed_path == "sgl/srt/a.py"
    assert pmap.locate("python/sglang_src/lang/c.py").installed_path == "sgl/lang/c.py"
    assert pmap.locate("test/srt/test_a.py").placement is Placement.NOT_SHIPPED


def test_a_lone_shared_file_name_is_no_evidence() -> None:
    pmap = PathMap(["pkg/conf.py", "pkg/core.py"], ["docs/conf.py", "pkg/core.py", "pkg/conf.py"])
    assert pmap.locate("docs/conf.py").placement is Placement.NOT_SHIPPED
    assert pmap.locate("pkg/conf.py").installed_path == "pkg/conf.py"


def test_compiled_sources_are_unverifiable_when_a_binary_ships() -> None:
    pmap = PathMap(["pkg/__init__.py", "pkg/_C.cpython-312-x86_64-linux-gnu.so"],
                   ["pkg/__init__.py", "csrc/attention.cu", "csrc/ops.cpp"])
    assert pmap.locate("csrc/attention.cu").placement is Placement.UNVERIFIABLE
    plain = PathMap(["pkg/__init__.py"], ["pkg/__init__.py", "csrc/ops.cpp"])
    assert plain.locate("csrc/ops.cpp").placement is Placement.NOT_SHIPPED
