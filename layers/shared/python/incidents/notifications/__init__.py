"""Notifications: each page's messages to its user, one for each notification rule that
applies, decided once and then delivered (decision 019)."""
