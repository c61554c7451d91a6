"""Run a file of IPython snippets (top-level ``await`` / ``async with``) as IPython does:
compiled with top-level await allowed and awaited on one event loop."""

import ast
import asyncio
import sys


async def main(path: str, source: str) -> None:
    code = compile(source, path, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    result = eval(code, {"__name__": "__main__", "__file__": path})
    if asyncio.iscoroutine(result):
        await result


if __name__ == "__main__":
    with open(sys.argv[1], encoding="utf-8") as fh:
        asyncio.run(main(sys.argv[1], fh.read()))
