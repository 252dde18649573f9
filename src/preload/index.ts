// Sandboxed preload: exposes the contract-derived API as window.api.
import { contextBridge, ipcRenderer } from 'electron';
import { buildApi } from './api';

contextBridge.exposeInMainWorld('api', buildApi(ipcRenderer));
