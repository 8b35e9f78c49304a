"""The Scrapy machinery shared by the HTML-only sources, whose spiders live in their own
packages: the subprocess runner (`spiders.run`) and the policy middlewares."""
