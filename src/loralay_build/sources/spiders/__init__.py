"""Scrapy spiders for the HTML-only sources; run in a subprocess by `spiders.run`."""
