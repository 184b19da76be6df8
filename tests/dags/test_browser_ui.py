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
SECTIONS = ("What to make", "Generation", "Validation and repair", "LLM endpoint")


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
    return driver.find_element(By.XPATH, f"//button[normalize-space()='{SECTIONS[0]}']/ancestor::*[@role='dialog']")


def open_section(dialog, title: str) -> None:
    """Unfold one section of the form (Airflow keeps one open at a time)."""
    from selenium.webdriver.common.by import By

    header = dialog.find_element(By.XPATH, f".//button[normalize-space()='{title}']")
    if header.get_attribute("aria-expanded") != "true":
        header.click()
    wait_until(lambda: header.get_attribute("aria-expanded") == "true", f"section {title} to open")


def field(dialog, key: str):
    from selenium.webdriver.common.by import By

    return dialog.find_element(By.NAME, f"element_{key}")


def type_into(dialog, key: str, value: str) -> None:
    """Replace a field's value as a person does. The form re-renders on every key, so each step finds the field anew."""
    from selenium.webdriver.common.keys import Keys

    for keys in ((Keys.CONTROL, "a"), (Keys.BACKSPACE,), (value,), (Keys.TAB,)):
        field(dialog, key).send_keys(*keys)


def pick_list(dialog, key: str):
    """The pick-list's text box (a combobox next to the field's hidden input)."""
    from selenium.webdriver.common.by import By

    return dialog.find_element(By.XPATH, f".//input[@name='element_{key}']/preceding::input[@role='combobox'][1]")


def pick(dialog, key: str, *names: str) -> None:
    from selenium.webdriver.common.keys import Keys

    box = pick_list(dialog, key)
    for name in names:
        box.click()
        box.send_keys(name)
        box.send_keys(Keys.ENTER)


def listed_options(driver) -> set[str]:
    """The options of the open pick-list (the closed ones' stay in the page, empty)."""
    from selenium.webdriver.common.by import By

    return {o.text for o in driver.find_elements(By.CSS_SELECTOR, "[role=option]") if o.text}


def submit(dialog) -> None:
    from selenium.webdriver.common.by import By

    dialog.find_element(By.XPATH, ".//button[normalize-space()='Trigger']").click()


def fields_by_section() -> dict[str, list[str]]:
    from coworkenv.pipeline.config import SynthesisConfig

    props = SynthesisConfig.model_json_schema()["properties"]
    return {
        section: [k for k in SynthesisConfig.model_fields if props[k]["section"] == section] for section in SECTIONS
    }


def test_the_trigger_form_shows_every_setting_in_its_section_with_title_description_and_pick_lists(
    browser, standalone: Standalone
) -> None:
    from selenium.webdriver.common.by import By

    from coworkenv.pipeline.config import SynthesisConfig
    from coworkenv.spec.capabilities import CAPABILITIES
    from coworkenv.synth.family import load_families

    dialog = open_trigger_form(browser, standalone)
    assert SynthesisConfig.form_sections == SECTIONS
    for number, (section, keys) in enumerate(fields_by_section().items(), 1):
        open_section(dialog, section)
        shot(browser, f"01-form-{number}-{section.lower().replace(' ', '-')}")
        text = " ".join(dialog.text.split())
        for key in keys:
            info = SynthesisConfig.model_fields[key]
            field(dialog, key)  # rendered, under its key
            assert info.title in text, (section, key)
            assert " ".join(info.description.split()) in text, (section, key)
    open_section(dialog, SECTIONS[0])
    for key, names in {"families": load_families().names(), "capabilities": CAPABILITIES.names()}.items():
        pick_list(dialog, key).click()
        options = wait_until(lambda: listed_options(browser), f"{key} options")
        assert options == set(names), key
        shot(browser, f"01-form-pick-list-{key}")
        # a click outside folds the list again (Escape would close the whole dialog)
        dialog.find_element(By.XPATH, ".//*[starts-with(normalize-space(), 'Trigger Dag')]").click()
        wait_until(lambda wanted=set(names): not listed_options(browser) & wanted, f"{key} options to fold")


@pytest.fixture(scope="module")
def form_run(browser, standalone: Standalone) -> str:
    """A run triggered from the form with non-default values in three sections and two families picked; its run id."""
    before = {run["dag_run_id"] for run in standalone.runs(DAG)}
    dialog = open_trigger_form(browser, standalone)
    open_section(dialog, "What to make")
    for key, value in {"n": "12", "seed": "23", "difficulty_min": "2"}.items():
        type_into(dialog, key, value)
    pick(dialog, "families", "csv_aggregate", "meeting_schedule")
    open_section(dialog, "Generation")
    type_into(dialog, "shards", "1")
    open_section(dialog, "Validation and repair")
    type_into(dialog, "workers", "1")
    shot(browser, "02-form-filled")
    submit(dialog)
    new = wait_until(
        lambda: [r["dag_run_id"] for r in standalone.runs(DAG) if r["dag_run_id"] not in before], "the triggered run"
    )
    shot(browser, "03-run-started")
    return new[0]


def test_a_run_triggered_from_the_form_with_non_default_values_publishes_its_release(
    browser, standalone: Standalone, form_run: str
) -> None:
    from coworkenv.data.reader import latest_release, read_manifest

    assert standalone.wait_for_run(DAG, form_run) == "success", standalone.tail()
    browser.get(f"{standalone.base}/dags/{DAG}/runs/{form_run}")
    wait_until(lambda: "success" in browser.page_source.lower(), "the run page")
    shot(browser, "04-run-succeeded")
    manifest = read_manifest(standalone.data_root, latest_release(standalone.data_root))
    assert manifest.run_id == form_run and manifest.row_counts["tasks"] == 12
    config = manifest.config
    assert (config["seed"], config["difficulty_min"], config["shards"], config["workers"]) == (23, 2, 1, 1)
    assert config["families"] == ["csv_aggregate", "meeting_schedule"]


def test_bad_settings_in_the_form_are_refused_with_the_reason_and_no_run(browser, standalone: Standalone) -> None:
    from selenium.webdriver.common.by import By

    before = len(standalone.runs(DAG))
    dialog = open_trigger_form(browser, standalone)
    open_section(dialog, "What to make")
    type_into(dialog, "difficulty_max", "1")
    type_into(dialog, "difficulty_min", "5")
    submit(dialog)
    reason = "Lowest difficulty (difficulty_min) 5 is above Highest difficulty (difficulty_max) 1"
    wait_until(lambda: reason in dialog.text, "the refusal in the form")
    alert = dialog.find_element(By.XPATH, f".//*[contains(text(), '{reason}')]")
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", alert)
    shot(browser, "05-refused")
    time.sleep(2)  # a run, had one been made, is listed at once
    assert len(standalone.runs(DAG)) == before


def plugin_page(browser, standalone: Standalone, route: str) -> str:
    """A CoworkEnv page as the UI shows it (inside Airflow's frame): its text."""
    from selenium.webdriver.common.by import By

    browser.get(f"{standalone.base}/plugin/{route}")
    frame = browser.find_element(By.TAG_NAME, "iframe")
    browser.switch_to.frame(frame)
    try:
        return wait_until(lambda: browser.find_element(By.TAG_NAME, "body").text, f"the {route} page")
    finally:
        browser.switch_to.default_content()


def test_the_plugin_pages_show_the_runs_release(browser, standalone: Standalone, form_run: str) -> None:
    from selenium.webdriver.common.by import By

    from coworkenv.data.reader import latest_release, read_manifest

    assert standalone.wait_for_run(DAG, form_run) == "success", standalone.tail()
    release = read_manifest(standalone.data_root, latest_release(standalone.data_root))
    text = plugin_page(browser, standalone, "coworkenv-releases")
    assert release.release_id in text and form_run in text and "LATEST" in text
    shot(browser, "06-plugin-releases")
    browser.get(f"{standalone.base}/coworkenv/releases/{release.release_id}")  # the release's own page
    text = browser.find_element(By.TAG_NAME, "body").text
    assert release.release_id in text and "csv_aggregate" in text and "meeting_schedule" in text
    assert "oracle" in text.lower()  # the sample task with its oracle trajectory
    shot(browser, "07-plugin-release")
    text = plugin_page(browser, standalone, "coworkenv-runs")
    assert form_run in text
    shot(browser, "08-plugin-runs")
