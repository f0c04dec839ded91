"""MODULE: dashkv loads no modules. LIST is empty; LOAD, LOADEX and UNLOAD are refused, as Redis
7.0 refuses them under its default enable-module-command no (the suite also runs against
redis-server, whose refusal names that option); HELP and the errors of a wrong call are
Redis's."""

import pytest

from helpers import assert_err, assert_err_prefix


def test_list_is_empty(r, r3):
    assert r.module_list() == []
    assert r3.module_list() == []


@pytest.mark.parametrize("args", [("LOAD", "/tmp/x.so"), ("LOAD", "/tmp/x.so", "a", "b"),
                                  ("LOADEX", "/tmp/x.so"),
                                  ("LOADEX", "/tmp/x.so", "CONFIG", "n", "v", "ARGS", "a"),
                                  ("UNLOAD", "x")])
def test_loading_and_unloading_are_refused(raw, args):
    assert_err_prefix(raw.call("MODULE", *args), "ERR MODULE command not allowed")


@pytest.mark.dashkv_only
def test_the_refusal_says_why(raw):
    assert_err(raw.call("MODULE", "LOAD", "/tmp/x.so"),
               "ERR MODULE command not allowed: dashkv does not load modules")


def test_help(raw):
    lines = raw.call("MODULE", "HELP")
    assert lines[0] == "MODULE <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"
    assert "LIST" in lines and "UNLOAD <name>" in lines and lines[-1] == "    Prints this help."


@pytest.mark.parametrize("args,err", [
    ((), "ERR wrong number of arguments for 'module' command"),
    (("LOAD",), "ERR wrong number of arguments for 'module|load' command"),
    (("UNLOAD",), "ERR wrong number of arguments for 'module|unload' command"),
    (("UNLOAD", "a", "b"), "ERR wrong number of arguments for 'module|unload' command"),
    (("LIST", "x"), "ERR wrong number of arguments for 'module|list' command"),
    (("NOPE",), "ERR unknown subcommand 'NOPE'. Try MODULE HELP."),
])
def test_wrong_calls(raw, args, err):
    assert_err(raw.call("MODULE", *args), err)
