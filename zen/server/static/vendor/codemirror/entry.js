// zen's CodeMirror bundle: the editor with the basic setup and the languages zen's files use
import { EditorView, basicSetup } from "codemirror";
import { EditorState } from "@codemirror/state";
import { keymap } from "@codemirror/view";
import { indentWithTab } from "@codemirror/commands";
import { python } from "@codemirror/lang-python";
import { javascript } from "@codemirror/lang-javascript";
import { markdown } from "@codemirror/lang-markdown";
import { json } from "@codemirror/lang-json";
import { yaml } from "@codemirror/lang-yaml";
window.ZenCM = { EditorView, EditorState, basicSetup, keymap, indentWithTab, languages: { python, javascript, markdown, json, yaml } };
