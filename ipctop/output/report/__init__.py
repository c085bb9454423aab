"""`ipctop report`: many records read into groups, as text, Markdown or one HTML page."""
