@echo off
rem Start usi_engine for a shogi GUI (ShogiHome, ShogiGUI, Shogidokoro, ...).
rem Register this file as the engine. It finds Python, changes to the repository
rem root and runs the USI loop unbuffered. Override with USI_ENGINE_PYTHON.
setlocal
cd /d "%~dp0.."
set "PY=%USI_ENGINE_PYTHON%"
if not defined PY if exist ".venv\Scripts\python.exe" set "PY=.venv\Scripts\python.exe"
if not defined PY if exist "venv\Scripts\python.exe" set "PY=venv\Scripts\python.exe"
if not defined PY (
  where py >nul 2>nul && set "PY=py -3"
)
if not defined PY set "PY=python"
%PY% -u -m usi_engine %*
