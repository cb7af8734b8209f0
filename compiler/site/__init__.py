"""Documents into the site: rendering, the generated pages and their emitters, the offline
search data, and writing the output folder.
"""
