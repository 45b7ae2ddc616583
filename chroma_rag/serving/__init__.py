"""Serwer dla zespołu (``chroma-rag serwuj``): strona, JSON API i narzędzia MCP nad ``chroma_rag.api`` – nigdy
bezpośrednio nad magazynem; tylko do odczytu."""
