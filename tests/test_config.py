from pathlib import Path

import pytest

from pbmserv.config import ConfigError, Settings, load_settings


def test_defaults_without_file_or_environment() -> None:
    assert load_settings(environ={}) == Settings()
    assert Settings().database_url == "sqlite:///pbmserv.db"
    assert Settings().mail_backend == "maildir" and Settings().maildir == "./mail/outbox"
    assert Settings().listen == "127.0.0.1:2525" and Settings().address == "pbmserv@localhost"


def test_file_then_environment(tmp_path: Path) -> None:
    path = tmp_path / "pbmserv.toml"
    path.write_text(
        '[database]\nurl = "sqlite:///x.db"\n[mail]\nbackend = "console"\naddress = "games@example.org"\n'
        '[games]\nrecent_moves = 4\nextra = ["a.b:C"]\n'
    )
    settings = load_settings(path, environ={
        "PBMSERV_MAIL_BACKEND": "memory", "PBMSERV_RECENT_MOVES": "6", "PBMSERV_ADMINS": "root, Alice",
    })
    assert settings.database_url == "sqlite:///x.db"
    assert settings.address == "games@example.org"
    assert settings.mail_backend == "memory"
    assert settings.recent_moves == 6
    assert settings.extra_games == ("a.b:C",)
    assert settings.admins == ("root", "Alice")


def test_config_file_named_by_environment(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text('[smtp]\nlisten = "127.0.0.1:2600"\n')
    assert load_settings(environ={"PBMSERV_CONFIG": str(path)}).listen == "127.0.0.1:2600"


@pytest.mark.parametrize(
    ("environ", "says"),
    [
        ({"PBMSERV_MAIL_BACKEND": "pigeon"}, "PBMSERV_MAIL_BACKEND must be one of smtp, maildir, console, memory, not 'pigeon'"),
        ({"PBMSERV_RECENT_MOVES": "many"}, "PBMSERV_RECENT_MOVES must be a whole number, not 'many'"),
        ({"PBMSERV_RECENT_MOVES": "2.5"}, "PBMSERV_RECENT_MOVES must be a whole number, not '2.5'"),
        ({"PBMSERV_POLL_SECONDS": "soon"}, "PBMSERV_POLL_SECONDS must be a number, not 'soon'"),
        ({"PBMSERV_POLL_SECONDS": "inf"}, "PBMSERV_POLL_SECONDS must be a number, not 'inf'"),
        ({"PBMSERV_MAIL_BACKEND": "smtp"}, "the smtp mail backend sends through a relay: set [mail] relay (or PBMSERV_RELAY)"),
        ({"PBMSERV_MAIL_BACKEND": "smtp", "PBMSERV_RELAY": "relay"}, "PBMSERV_RELAY must be host:port"),
        ({"PBMSERV_RELAY": ":25"}, "PBMSERV_RELAY must be host:port"),
        ({"PBMSERV_LISTEN": "127.0.0.1"}, "PBMSERV_LISTEN must be host:port"),
        ({"PBMSERV_LISTEN": "127.0.0.1:70000"}, "PBMSERV_LISTEN must be host:port"),
        ({"PBMSERV_DATABASE_URL": "pbmserv.db"}, "PBMSERV_DATABASE_URL is not a database URL"),
        ({"PBMSERV_DATABASE_URL": "oracle://scott:tiger@db/x"}, "PBMSERV_DATABASE_URL names a oracle database"),
        ({"PBMSERV_BAKEND": "smtp"}, "unknown environment variable PBMSERV_BAKEND: not a pbmserv setting (did you mean PBMSERV_MAIL_BACKEND?"),
        ({"PBMSERV_DEBUG": "1"}, "unknown environment variable PBMSERV_DEBUG"),
        # before, these were taken: every signup then failed with a traceback, or the value made no sense
        ({"PBMSERV_PASSWORD_MEMORY_KIB": "1"}, "PBMSERV_PASSWORD_MEMORY_KIB must be 64 to 4194304 KiB"),
        ({"PBMSERV_PASSWORD_PARALLELISM": "16", "PBMSERV_PASSWORD_MEMORY_KIB": "64"},
         "PBMSERV_PASSWORD_MEMORY_KIB must be at least 8 KiB for each of the PBMSERV_PASSWORD_PARALLELISM lanes (128), not 64"),
        ({"PBMSERV_DATABASE_BUSY_SECONDS": "-1"}, "PBMSERV_DATABASE_BUSY_SECONDS must be 0.1 to 600, not -1"),
        ({"PBMSERV_REPLIES_PER_HOUR": "0"}, "PBMSERV_REPLIES_PER_HOUR must be at least 1, not 0"),
        ({"PBMSERV_NAGTIME": "0"}, "PBMSERV_NAGTIME must be 1 to 365 days, not 0"),
        ({"PBMSERV_RECENT_MOVES": "0"}, "PBMSERV_RECENT_MOVES must be 1 to 200, not 0"),
        ({"PBMSERV_TIMER_SECONDS": "0"}, "PBMSERV_TIMER_SECONDS must be 1 to 86400, not 0"),
        ({"PBMSERV_MAX_MESSAGE_BYTES": "10"}, "PBMSERV_MAX_MESSAGE_BYTES must be 1000 to 104857600, not 10"),
    ],
)
def test_bad_settings_are_refused(environ: dict[str, str], says: str) -> None:
    with pytest.raises(ConfigError) as refused:
        load_settings(environ=environ)
    assert says in str(refused.value)
    assert "tiger" not in str(refused.value)


def test_good_values_from_the_environment() -> None:
    settings = load_settings(environ={
        "PBMSERV_MAIL_BACKEND": "smtp", "PBMSERV_RELAY": "127.0.0.1:25", "PBMSERV_LISTEN": ":2600",
        "PBMSERV_POLL_SECONDS": "2", "PBMSERV_DATABASE_URL": "postgresql://pbmserv@db/pbmserv",
    })
    assert (settings.relay, settings.listen, settings.poll_seconds) == ("127.0.0.1:25", ":2600", 2.0)


def test_variables_that_are_not_settings_are_let_be() -> None:
    environ = {"PBMSERV_CONFIG": "", "PBMSERV_TEST_DATABASE_URL": "x", "PBMSERV_REQUIRE_POSTGRES": "1", "PBMSERV_REGENERATE": "1"}
    assert load_settings(environ=environ) == Settings()


@pytest.mark.parametrize(
    ("toml", "says"),
    [
        ('[mail]\nbakend = "smtp"\n', "unknown setting [mail] bakend (did you mean backend?)"),
        ('[mail]\nlisten = "127.0.0.1:25"\n', "unknown setting [mail] listen (did you mean [smtp] listen?)"),
        ('[mial]\nbackend = "smtp"\n', "unknown section [mial] (did you mean [mail]?)"),
        ("[colours]\n", "unknown section [colours] (the sections are [bots], [database], [delivery]"),
        ('url = "sqlite:///x.db"\n', "unknown setting url outside any section (did you mean [database] url?)"),
        ('[smtp]\nmax_sessions = "many"\n', "[smtp] max_sessions must be a whole number, not 'many'"),
        ('[smtp]\nmax_sessions = "200"\n', "[smtp] max_sessions must be a whole number, not '200'"),
        ("[smtp]\nmax_sessions = 2.5\n", "[smtp] max_sessions must be a whole number, not 2.5"),
        ("[smtp]\nmax_sessions = true\n", "[smtp] max_sessions must be a whole number"),
        ('[smtp]\npoll_seconds = "1"\n', "[smtp] poll_seconds must be a number, not '1'"),
        ("[smtp]\nlisten = 2525\n", "[smtp] listen must be a string, not 2525"),
        ('[games]\nadmins = "root"\n', "[games] admins must be a list of strings"),
        ('[mail]\nbackend = "smtp"\n', "the smtp mail backend sends through a relay: set [mail] relay (or PBMSERV_RELAY)"),
        ('[mail]\nbackend = "smtp"\nrelay = "localhost"\n', "[mail] relay must be host:port"),
    ],
)
def test_mistakes_in_the_file_are_named(tmp_path: Path, toml: str, says: str) -> None:
    path = tmp_path / "pbmserv.toml"
    path.write_text(toml)
    with pytest.raises(ConfigError) as refused:
        load_settings(path, environ={})
    assert says in str(refused.value)


def test_an_int_in_the_file_is_a_float_setting(tmp_path: Path) -> None:
    path = tmp_path / "pbmserv.toml"
    path.write_text("[smtp]\npoll_seconds = 2\n")
    assert load_settings(path, environ={}).poll_seconds == 2.0


def test_example_config_lists_every_setting_with_its_default() -> None:
    example = Path(__file__).resolve().parents[1] / "config.example.toml"
    assert load_settings(example, environ={}) == Settings()


def test_the_prepared_switch_is_true_or_false(tmp_path: Path) -> None:
    path = tmp_path / "pbmserv.toml"
    path.write_text("[database]\nprepared = false\n")
    assert load_settings(path, environ={}).database_prepared is False
    assert load_settings(path, environ={"PBMSERV_DATABASE_PREPARED": "True"}).database_prepared is True
    assert load_settings(environ={"PBMSERV_DATABASE_PREPARED": "0"}).database_prepared is False
    with pytest.raises(ConfigError, match="PBMSERV_DATABASE_PREPARED must be true or false, not 'off'"):
        load_settings(environ={"PBMSERV_DATABASE_PREPARED": "off"})
    path.write_text('[database]\nprepared = "false"\n')
    with pytest.raises(ConfigError, match="must be true or false, not 'false'"):
        load_settings(path, environ={})
