"""Persist: durable partially-ordered time-varying collections (pTVCs) as blob parts plus consensus state."""
