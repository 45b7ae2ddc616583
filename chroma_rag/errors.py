"""Błędy, które użytkownik widzi jako jedno polskie zdanie (CLI nie pokazuje tracebacku)."""


class UserError(Exception):
    """Błąd po stronie danych wejściowych lub środowiska; treść to gotowy komunikat po polsku."""

    exit_code = 1


class UnreadableFile(UserError):
    """Pliku nie da się przeczytać; indeksowanie pomija go i idzie dalej."""


class InvalidValue(UserError):
    """Zła wartość opcji lub argumentu, wykryta przez nasz kod (a nie parser): błąd wywołania, kod 2."""

    exit_code = 2
