"""Mail in (parse, charsets, quotes), mail out (compose) and delivery backends."""
