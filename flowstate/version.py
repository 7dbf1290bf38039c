"""The library's version (a module of its own, so the store can name it without importing the
package root)."""

__version__ = "0.1.0"
