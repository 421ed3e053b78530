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
        ({"PBMSERV_MAIL_BACKEND": "pigeon"}, "mail backend"),
        ({"PBMSERV_RECENT_MOVES": "many"}, "recent_moves"),
    ],
)
def test_bad_settings_are_refused(environ: dict[str, str], says: str) -> None:
    with pytest.raises(ConfigError, match=says):
        load_settings(environ=environ)


def test_example_config_lists_every_setting_with_its_default() -> None:
    example = Path(__file__).resolve().parents[1] / "config.example.toml"
    assert load_settings(example, environ={}) == Settings()
