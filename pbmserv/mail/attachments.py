"""Files attached to a mail: a game's record as JSON beside its text
(`GAME record`, docs/decisions/0148-game-records.md).

Such a mail is multipart/mixed: first the text/plain part, its bytes those
of a plain mail's body, then each file as a part of its own with
`Content-Disposition: attachment` and its filename. The email package
writes the parts (`outbound.message_with_attachments` puts the mail's own
headers above them)."""

from __future__ import annotations

from dataclasses import dataclass
from email import policy
from email.message import MIMEPart


@dataclass(frozen=True)
class Attachment:
    """A file a mail carries: its name as the reader saves it, its MIME type (`maintype/subtype`) and bytes."""

    filename: str
    content_type: str
    data: bytes


def mixed(text_headers: list[tuple[str, str]], text_body: str, attachments: tuple[Attachment, ...]) -> MIMEPart:
    """The text part (its content headers and encoded body) followed by the attachments."""
    message = MIMEPart(policy=policy.default)
    for name, value in text_headers:
        message[name] = value
    message.set_payload(text_body)
    message.make_mixed()  # the text part as it stands becomes the first part
    for attachment in attachments:
        part = MIMEPart(policy=policy.default)
        maintype, _, subtype = attachment.content_type.partition("/")
        part.set_content(attachment.data, maintype, subtype, disposition="attachment", filename=attachment.filename)
        message.attach(part)
    return message
