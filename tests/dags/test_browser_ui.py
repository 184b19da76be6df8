"""The Airflow UI as an operator meets it: a real headless Chromium (Debian's `chromium` and `chromedriver`, driven
by Selenium) against `make airflow-standalone` started by the test, doing what the README's UI section says.

Screenshots of every step are kept under `out/test-artifacts/browser/` (or `$COWORKENV_TEST_ARTIFACTS/browser/`).
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.dags.conftest import ROOT
from tests.dags.standalone import Standalone

pytestmark = [pytest.mark.airflow, pytest.mark.slow, pytest.mark.integration, pytest.mark.xdist_group("airflow")]

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
WAIT_S = 30
DAG = "coworkenv_synthesize"


def artifacts() -> Path:
    folder = Path(os.environ.get("COWORKENV_TEST_ARTIFACTS") or ROOT / "out" / "test-artifacts") / "browser"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture(scope="module")
def browser(standalone: Standalone) -> Iterator:
    if not (CHROMIUM and CHROMEDRIVER):
        pytest.skip("Debian's chromium and chromium-driver are not installed (.ci/run installs them where it can)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By

    options = webdriver.ChromeOptions()
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,1100"):
        options.add_argument(arg)
    options.binary_location = CHROMIUM
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.implicitly_wait(WAIT_S)
    try:
        driver.get(standalone.base + "/")
        driver.find_element(By.NAME, "username").send_keys("admin")
        driver.find_element(By.NAME, "password").send_keys(standalone.password)
        driver.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
        wait_until(lambda: "/auth/login" not in driver.current_url, "the login page to go away")
        yield driver
    finally:
        driver.quit()


def wait_until(condition: Callable[[], object], what: str, timeout: float = WAIT_S) -> object:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.5)
    raise AssertionError(f"timed out waiting for {what}")


def shot(driver, name: str) -> None:
    driver.save_screenshot(str(artifacts() / f"{name}.png"))


def open_trigger_form(driver, standalone: Standalone, dag_id: str = DAG):
    """The DAG's page, its Trigger button, and the dialog with the run parameters."""
    from selenium.webdriver.common.by import By

    standalone.wait_for_dag(dag_id)
    driver.get(f"{standalone.base}/dags/{dag_id}")
    driver.find_element(By.XPATH, "//button[normalize-space()='Trigger']").click()
    return driver.find_element(By.XPATH, "//*[normalize-space()='Run Parameters']/ancestor::*[@role='dialog']")


def field(dialog, key: str):
    from selenium.webdriver.common.by import By

    return dialog.find_element(By.NAME, f"element_{key}")


def type_into(element, value: str) -> None:
    from selenium.webdriver.common.keys import Keys

    element.click()
    element.send_keys(Keys.CONTROL, "a")
    element.send_keys(Keys.BACKSPACE)
    element.send_keys(value)
    element.send_keys(Keys.TAB)


def submit(dialog) -> None:
    from selenium.webdriver.common.by import By

    dialog.find_element(By.XPATH, ".//button[normalize-space()='Trigger']").click()


def test_the_trigger_form_shows_every_setting_with_its_title_and_description(browser, standalone: Standalone) -> None:
    from coworkenv.pipeline.config import SynthesisConfig

    dialog = open_trigger_form(browser, standalone)
    shot(browser, "01-trigger-form")
    text = dialog.text
    for name, info in SynthesisConfig.model_fields.items():
        field(dialog, name)  # rendered, under its key
        assert info.title and info.title in text, name
        assert info.description and info.description.split(":")[0].split("(")[0].strip() in " ".join(text.split()), name


def test_a_run_triggered_from_the_form_with_non_default_values_publishes_its_release(browser, standalone: Standalone) -> None:
    from coworkenv.data.reader import latest_release, read_manifest

    before = {run["dag_run_id"] for run in standalone.runs(DAG)}
    dialog = open_trigger_form(browser, standalone)
    for key, value in {"n": "12", "seed": "23", "shards": "1", "workers": "1", "difficulty_min": "2"}.items():
        type_into(field(dialog, key), value)
    shot(browser, "02-form-filled")
    submit(dialog)
    new = wait_until(lambda: [r["dag_run_id"] for r in standalone.runs(DAG) if r["dag_run_id"] not in before], "the triggered run")
    run_id = new[0]
    shot(browser, "03-run-started")
    assert standalone.wait_for_run(DAG, run_id) == "success", standalone.tail()
    browser.get(f"{standalone.base}/dags/{DAG}/runs/{run_id}")
    wait_until(lambda: "success" in browser.page_source.lower(), "the run page")
    shot(browser, "04-run-succeeded")
    manifest = read_manifest(standalone.data_root, latest_release(standalone.data_root))
    assert manifest.run_id == run_id and manifest.row_counts["tasks"] == 12
    assert (manifest.config["seed"], manifest.config["difficulty_min"], manifest.config["shards"]) == (23, 2, 1)
