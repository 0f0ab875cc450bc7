"""A layer's member headers read from the tar's blocks give what the standard library's tarfile reads:
names (ustar prefixes, GNU long names, PAX paths), kinds, data offsets, sizes, links,
in every tar format; a damaged header or a cut tar is TarDamaged."""

from __future__ import annotations

import io
import tarfile

import pytest

from prstack.targets.tarheaders import TarDamaged, headers

KIND = {tarfile.REGTYPE: "file", tarfile.DIRTYPE: "dir", tarfile.SYMTYPE: "symlink", tarfile.LNKTYPE: "hardlink",
        tarfile.FIFOTYPE: "other"}


def sample(fmt: int) -> bytes:
    buffer = io.BytesIO()
    long_folder = "site-packages/" + "/".join(f"deep{i:02}" for i in range(30))
    with tarfile.open(fileobj=buffer, mode="w", format=fmt, encoding="utf-8") as tar:
        def add(name: str, kind: bytes = tarfile.REGTYPE, data: bytes = b"", link: str = "") -> None:
            info = tarfile.TarInfo(name)
            info.type, info.size, info.linkname = kind, len(data), link
            tar.addfile(info, io.BytesIO(data) if kind == tarfile.REGTYPE else None)

        add("site-packages", tarfile.DIRTYPE)
        add("site-packages/empty.py")
        add("site-packages/m.py", data=b"x = 1\n" * 300)
        add(f"{long_folder}/a_module_with_a_rather_long_name_{'x' * 40}.py", data=b"long\n")
        add("site-packages/link.py", tarfile.SYMTYPE, link="m.py")
        add("site-packages/hard.py", tarfile.LNKTYPE, link="site-packages/m.py")
        add("site-packages/fifo", tarfile.FIFOTYPE)
        add("site-packages/.wh..wh..opq")
        add(f"site-packages/{'l' * 120}.py", tarfile.SYMTYPE, link="../" + "t" * 120)
        if fmt != tarfile.USTAR_FORMAT:
            add("site-packages/café_ünïcode.py", data=b"u\n")
        add("site-packages/last.bin", data=bytes(range(256)) * 9)
    return buffer.getvalue()


@pytest.mark.parametrize("fmt", [tarfile.USTAR_FORMAT, tarfile.GNU_FORMAT, tarfile.PAX_FORMAT])
def test_headers_are_those_tarfile_reads(fmt: int) -> None:
    if fmt == tarfile.USTAR_FORMAT:  # (ustar holds no name over 255 bytes nor a link over 100)
        with pytest.raises(ValueError):
            sample(fmt)
        return
    data = sample(fmt)
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        want = [(m.name, KIND[m.type], m.offset_data if m.isreg() else None, m.size if m.isreg() else 0,
                 m.linkname) for m in tar]
    got = [(h.name.rstrip("/"), h.kind, h.offset if h.kind == "file" else None, h.size, h.link)
           for h in headers(io.BytesIO(data))]
    assert got == want
    assert len(got) >= 10 and any(len(name) > 255 for name, *_ in got)


def test_a_ustar_prefix_is_part_of_the_name() -> None:
    buffer = io.BytesIO()
    name = "usr/lib/python3/" + "p" * 90 + "/mod.py"
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        info = tarfile.TarInfo(name)
        info.size = 3
        tar.addfile(info, io.BytesIO(b"abc"))
    (header,) = headers(io.BytesIO(buffer.getvalue()))
    assert header.name == name and header.size == 3
    assert buffer.getvalue()[header.offset : header.offset + 3] == b"abc"


def test_a_damaged_header_or_a_cut_tar_is_refused() -> None:
    data = bytearray(sample(tarfile.PAX_FORMAT))
    with pytest.raises(TarDamaged, match="truncated"):
        list(headers(io.BytesIO(bytes(data[: len(data) // 2]))))
    with pytest.raises(TarDamaged, match="truncated"):
        list(headers(io.BytesIO(bytes(data.rstrip(b"\0")))))
    data[3] ^= 0x40  # (a name byte: the checksum no longer holds)
    with pytest.raises(TarDamaged, match="checksum"):
        list(headers(io.BytesIO(bytes(data))))


@pytest.mark.parametrize("size", ["-1536", "-1", "+3", " 3", "3_0", "0x3", "", "9" * 30])
def test_a_pax_size_that_is_no_plain_number_is_refused(size: str) -> None:
    """Only decimal digits are a size (as Go's archive/tar reads them): int()'s signs, spaces and
    underscores are not, nor a number past any layer; a negative one never sends the reader back."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        info = tarfile.TarInfo("x.py")
        info.pax_headers = {"size": size}
        tar.addfile(info)
    with pytest.raises(TarDamaged, match=r"PAX size|member size"):
        list(headers(io.BytesIO(buffer.getvalue())))


def test_a_header_size_that_is_negative_or_past_any_layer_is_refused() -> None:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        info = tarfile.TarInfo("x.py")
        info.size = 3
        tar.addfile(info, io.BytesIO(b"abc"))
    for field, why in ((b"-0001000\0\0\0\0", "no tar header"), (b"\xff" * 12, "negative"),
                       (b"\x80" + b"\x7f" * 11, "past any layer")):
        data = bytearray(buffer.getvalue())
        data[124:136] = field
        data[148:156] = b" " * 8
        data[148:155] = f"{sum(data[:512]):06o}\0".encode()
        with pytest.raises(TarDamaged, match=why):
            list(headers(io.BytesIO(bytes(data))))
